"""A training step compiled whole that takes its batch from a generator made outside it (`next(self._order)` in
the data helper; blind A/B batch 27, a device-resident tabular loader). Dynamo runs that next() once while
tracing and keeps the batch it returned: every compiled step trains on that batch, the generator never advances.
No error: the printed losses differ from eager's.  FIXED=1: the batch is fetched outside the compiled step; --no-compile: eager."""
import os
import sys

import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"


def batch_order(n, epochs):
    for _ in range(epochs):
        for b in range(n):
            yield b


class Resident:
    def __init__(self, n, bs):
        g = torch.Generator().manual_seed(0)
        self.x, self.bs = torch.randn(n, 4, generator=g), bs
        self.y = self.x.sum(1, keepdim=True)
        self._order = batch_order(n // bs, 100)

    def next_batch(self):
        b = next(self._order)
        return self.x[b * self.bs:(b + 1) * self.bs], self.y[b * self.bs:(b + 1) * self.bs]


torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = Resident(64, 8)


def train_step(x=None, y=None):
    if x is None:
        x, y = data.next_batch()
    return (model(x) - y).pow(2).mean()


if "--no-compile" not in sys.argv:
    train_step = torch.compile(train_step, backend="eager")
for i in range(12):
    loss = train_step(*data.next_batch()) if FIXED else train_step()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if i % 4 == 3:
        print(f"step {i}: loss {loss.item():.4f}")
