"""A conditioning gate over gain matrices that are exactly singular (blind A/B batch 15's controller eval,
written fresh; pytorch#150114): all entries are arctan(1), so cond(K) is inf in exact arithmetic and in
fp64. Eager's float32 arctan rounds so that the SVD leaves a noise singular value (cond ~3.7e7, the gate
passes); Inductor's arctan is one ulp lower and cond is inf (the gate fails). Compiled is the correct one
(tests/test_only_compiled.py)."""
import sys

import torch


def conditioning(w):
    gains = torch.arctan(w)                       # (batch, 2, 2)
    return torch.linalg.cond(gains)


w = torch.ones(64, 2, 2)
fn = torch.compile(conditioning) if "--eager" not in sys.argv else conditioning
cond = fn(w)
worst = cond.log10().max().item()
print(f"max log10 cond {worst:.3f}")
if not worst < 8.0:
    sys.exit(f"FAILED: gain matrices ill-conditioned (max log10 cond {worst} > 8)")
print("PASSED")
