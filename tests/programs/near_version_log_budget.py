"""Rule 4 / rule 3 near-miss: the compiled step returns weight._version only for a debug log (backend="eager"
reads the real counter, so nothing is stale). The failure is a CI compile budget (dynamic=False: one graph per
batch size). Expected: no tensor_version_traced, route to the recompiles (rule 3)."""
import sys

import torch
import torch.nn as nn
from torch._dynamo.utils import counters

lin = nn.Linear(8, 8)


@torch.compile(backend="eager", dynamic=False)
def step(x):
    v = lin.weight._version
    return lin(x).relu().sum(), v


opt = torch.optim.SGD(lin.parameters(), lr=0.1)
for b in (4, 6, 8):
    loss, v = step(torch.randn(b, 8))
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"batch {b} loss {loss.item():.4f} weight_version {v}")
g = counters["stats"]["unique_graphs"]
if g > 1:
    sys.exit(f"FAIL: {g} graphs compiled for 3 batch sizes (budget 1)")
print("PASS")
