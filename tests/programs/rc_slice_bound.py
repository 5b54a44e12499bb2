"""A token scorer that truncates requests to a 256-token window (`ids[:, :256]`) under torch.compile: lengths
64 and 96 (automatic dynamic makes the length dynamic, the graph assumes 2 <= T <= 255 from the slice), then
longer requests: one more graph for lengths above the bound, then stable. Two recompiles, both expected (blind
A/B batch 38: a range guard grouped with the automatic-dynamic mismatch read as "stop the recompiles")."""
import torch

torch.manual_seed(0)


class Scorer(torch.nn.Module):
    def __init__(self, vocab=1000, dim=16, window=256):
        super().__init__()
        self.window = window
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(window, dim) * 0.02)
        self.head = torch.nn.Linear(dim, 1)

    def forward(self, ids):
        ids = ids[:, :self.window]
        h = self.tok(ids) + self.pos[:ids.shape[1]]
        return self.head(h.mean(1)).squeeze(-1)


model = torch.compile(Scorer().eval(), backend="eager")
with torch.no_grad():
    for T in (64, 96, 128, 320, 400, 200):
        print(f"T={T} score={model(torch.randint(0, 1000, (4, T))).sum().item():.4f}")
