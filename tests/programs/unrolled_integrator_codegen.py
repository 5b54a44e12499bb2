"""A damped-oscillator integrator unrolled over SUBSTEPS symplectic-Euler steps in one compiled function (blind A/B
batch 59's eo, pytorch#148073): each step reads both earlier results, Inductor stores none of them below its op-count
threshold, and its code generation re-expands the inlined expressions, growing about exponentially with the steps.
FIXED=1: torch.compile(..., options={"realize_opcount_threshold": 30})."""
import os
import time

import torch

SUBSTEPS = int(os.environ.get("SUBSTEPS", "6"))


def integrate(q, p, k, c, dt):
    for _ in range(SUBSTEPS):
        p = p - dt * (k * q + c * p)
        q = q + dt * p
    return q, p


torch.manual_seed(0)
k = torch.rand(64, 8, requires_grad=True)
c = torch.rand(64, 8, requires_grad=True)
q, p = torch.randn(64, 8), torch.randn(64, 8)
opts = {"realize_opcount_threshold": 30} if os.environ.get("FIXED") == "1" else None
step = torch.compile(integrate, options=opts)
t0 = time.perf_counter()
qn, pn = step(q, p, k, c, 0.01)
(qn.square().mean() + pn.square().mean()).backward()
print(f"first compiled step {time.perf_counter() - t0:.1f} s, grad norm {k.grad.norm().item():.4f}")
