"""A cosine-similarity classifier head that caches its normalized class weights and rebuilds them when the
weight's version counter moves (an optimizer step bumps it). Training runs eagerly; evaluation runs the compiled
model on the same weights, once before training and after each epoch. Compiled with an AOTAutograd backend, the
counter read in forward is the traced functional tensor's (0), so the cache filled before training is never
rebuilt and the check against eager fails after the first epoch (blind A/B batch 66; pytorch#135441).
FIXED=1: normalize on every call (no cache)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class CosineHead(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, d) * 0.1)
        self._proto = None
        self._proto_version = -1

    def prototypes(self):
        if os.environ.get("FIXED") == "1" or self.training:
            return F.normalize(self.weight, dim=-1)
        if self._proto_version != self.weight._version:
            self._proto = F.normalize(self.weight.detach(), dim=-1)
            self._proto_version = self.weight._version
        return self._proto

    def forward(self, h):
        return 10.0 * F.normalize(h, dim=-1) @ self.prototypes().t()


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
        self.head = CosineHead(32, 4)

    def forward(self, x):
        return self.head(self.enc(x))


torch.manual_seed(0)
model = Classifier()
# (aot_eager: the same AOTAutograd tracing as inductor, without its compile time)
compiled = torch.compile(model, backend="aot_eager")
x, y = torch.randn(128, 16), torch.randint(0, 4, (128,))
opt = torch.optim.SGD(model.parameters(), lr=0.5)


def evaluate(fn):
    model.eval()
    with torch.no_grad():
        acc = (fn(x).argmax(-1) == y).float().mean().item()
    model.train()
    return acc


print(f"epoch 0 acc {evaluate(compiled):.4f}")
for epoch in range(1, 4):
    for _ in range(10):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    got, want = evaluate(compiled), evaluate(model)
    print(f"epoch {epoch} acc compiled {got:.4f} eager {want:.4f}")
    assert got == want, f"compiled eval differs from eager at epoch {epoch}: {got:.4f} vs {want:.4f}"
print("OK")
