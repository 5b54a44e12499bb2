"""A release gate over pooling strategies (blind A/B batch 57's ed, pytorch#197811): each compiled embedder is a closure
over `reduce`, a torch.Tensor method; the closures share one code object and Dynamo guards no closure cell holding
such a method, so the graph traced for "mean" is reused for "max". Every graph is right on its first call, and the
gate's tolerance is far above float32 rounding. FIXED=1: torch.mean / torch.amax, which are guarded."""
import os
import sys

import torch

if os.environ.get("FIXED") == "1":
    POOL = {"mean": torch.mean, "max": torch.amax}
else:
    POOL = {"mean": torch.Tensor.mean, "max": torch.Tensor.amax}
ATOL = 1e-4


def build(reduce):
    def embed(x):
        return reduce(torch.tanh(x) * 2, dim=1)
    return torch.compile(embed)


torch.manual_seed(0)
x = torch.randn(8, 16)
bad = []
for name, fn in POOL.items():
    d = (build(fn)(x) - fn(torch.tanh(x) * 2, dim=1)).abs().max().item()
    print(f"{name:5s} {d:11.3e}")
    if d > ATOL:
        bad.append(name)
if bad:
    sys.exit(f"GATE FAILED: compiled/eager mismatch for {bad} (atol={ATOL})")
print("GATE PASSED")
