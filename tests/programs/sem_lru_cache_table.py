"""A small causal language model whose attention mask comes from an lru_cache'd builder (built once
per sequence length in eager). Compiled, Dynamo ignores the cache wrapper: the builder runs on every
step, which the program's build counter catches."""
import functools

import torch
import torch.nn as nn

BUILDS = []


@functools.lru_cache(maxsize=8)
def causal_mask(n):
    BUILDS.append(n)                      # how often the mask is really built
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


class TinyLM(nn.Module):
    def __init__(self, vocab=64, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        h = self.emb(tokens)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / 32 ** 0.5 + causal_mask(tokens.shape[1])
        return self.out(att.softmax(-1) @ v)


torch.manual_seed(0)
model = TinyLM()
cmodel = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    tokens = torch.randint(0, 64, (4, 16))
    logits = cmodel(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 64), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
assert len(BUILDS) == 1, f"causal mask built {len(BUILDS)} times for one sequence length"
print("mask cache:", causal_mask.cache_info())
