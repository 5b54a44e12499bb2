"""A per-section time budget read from torch.profiler, with record_function ranges inside a compiled model (blind A/B
batch 58's el): Dynamo treats the ranges as no-ops inside the compiled region and warns once, so the profile has no
section rows and the budget check fails with KeyError. FIXED=1: the sections are compiled one by one, the ranges
stay outside the compiled code."""
import os

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function


class Net(nn.Module):
    def __init__(self, d=64):
        super().__init__()
        self.embed, self.mlp, self.head = nn.Linear(d, d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                                                          nn.Linear(4 * d, d)), nn.Linear(d, 8)

    def forward(self, x):
        with record_function("embed"):
            x = self.embed(x)
        with record_function("mlp"):
            x = x + self.mlp(x)
        with record_function("head"):
            return self.head(x)


torch.manual_seed(0)
net = Net()
if os.environ.get("FIXED") == "1":
    for name in ("embed", "mlp", "head"):
        setattr(net, name, torch.compile(getattr(net, name)))
    run = net
else:
    run = torch.compile(net)
x = torch.randn(32, 64)
run(x)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    for _ in range(3):
        run(x)
totals = {e.key: e.cpu_time_total for e in prof.key_averages()}
total = sum(totals[s] for s in ("embed", "mlp", "head"))
print("mlp share", f"{totals['mlp'] / total:.0%}")
