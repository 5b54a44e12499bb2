"""Count the tokens a compiled language-model step processes with a small helper marked
allow_in_graph (to keep it from breaking the graph). Its counter update is a Python side effect: it
runs while compiling only, so the token count is wrong only compiled."""
import torch
import torch.nn as nn

STATS = {"tokens": 0}


@torch.compiler.allow_in_graph
def count_tokens(ids):
    STATS["tokens"] += ids.numel()
    return ids


class TinyLM(nn.Module):
    def __init__(self, vocab=100, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.mix = nn.Conv1d(d, d, kernel_size=3, padding=2)     # causal: keep the first T outputs
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.emb(count_tokens(ids))
        h = h + self.mix(h.transpose(1, 2))[..., :ids.shape[1]].transpose(1, 2)
        return self.head(h + self.mlp(h))


torch.manual_seed(0)
model = TinyLM()
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, 100, (8, 12))
    loss = nn.functional.cross_entropy(cmodel(ids[:, :-1]).reshape(-1, 100), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
expected = 5 * 8 * 11
assert STATS["tokens"] == expected, f"counted {STATS['tokens']} tokens, processed {expected}"
print("tokens processed:", STATS["tokens"])
