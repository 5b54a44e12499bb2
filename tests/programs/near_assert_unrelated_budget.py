"""Near miss (review of batch 66): an assert in the compiled forward that never fires, an `except AssertionError`
around an unrelated config check, and a CI compile budget that fails (dynamic=False: a graph per batch size). The
failure is the budget: no assert class, the recompiles it counts."""
import sys

import torch
import torch.nn as nn
from torch._dynamo.utils import counters


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        assert (x.abs() < 1e6).all(), "exploding input"
        return self.lin(x).relu()


def check_cfg(cfg):
    assert cfg["width"] == 4, "width must be 4"


try:
    check_cfg({"width": 4})
except AssertionError as e:
    raise SystemExit(f"bad config: {e}")

model = torch.compile(Net(), backend="eager", dynamic=False)
for b in (3, 5, 7):
    print(b, model(torch.randn(b, 4)).sum().item())
g = counters["stats"]["unique_graphs"]
if g > 1:
    sys.exit(f"FAIL: {g} graphs for 3 batch sizes (budget 1)")
print("PASS")
