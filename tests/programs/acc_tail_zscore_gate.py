"""Blind A/B batch 44: a tail z-score, sqrt(2) * erfinv(2u - 1) with u = 1 - q computed in float32 for tail
probabilities q near 1e-6, behind a compiled-vs-eager gate at atol 1e-5. The compiled erfinv differs from
eager's by ~1e-5 there, while each is ~5e-3 from the float64 result: float32's 1 - q loses most of q.
DIRECT=1 computes z from q directly (torch.special.ndtri), which passes. RELU_BUG=1 adds 1e-4 * relu(x) to z
under PyTorch's injected relu miscompile (every value off by 1e-4 compiled): a wrong kernel beside the
ill-conditioned values, which torch's RMSE rule averages away (review of batch 44)."""
import math
import os
import sys

import torch
import torch._inductor.config as inductor_config

if os.environ.get("RELU_BUG"):
    inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class TailScore(torch.nn.Module):
    def __init__(self, n_levels=512):
        super().__init__()
        self.register_buffer("levels", torch.linspace(0.0, 10.0, n_levels))
        self.direct = bool(os.environ.get("DIRECT"))
        self.relu_term = bool(os.environ.get("RELU_BUG"))

    def forward(self, x):
        n = self.levels.numel()
        rank = torch.searchsorted(self.levels, x.contiguous()).to(x.dtype)
        beyond = (x - self.levels[-1]).clamp_min(0)
        q = (1.0 - rank / (n + 1)).clamp_min(1.0 / (n + 1)) * torch.exp(-2.0 * beyond)
        if self.direct:
            z = -torch.special.ndtri(q.clamp(1e-12, 0.5))
        else:
            u = (1.0 - q).clamp(0.5, 1.0 - 2.0 ** -23)
            z = math.sqrt(2.0) * torch.erfinv(2.0 * u - 1.0)
        if self.relu_term:
            z = z + 1e-4 * torch.relu(x)
        return z, (z * z).sum(-1)


torch.manual_seed(7)
model = TailScore()
x = torch.rand(256, 64) * 14.0
eager = model(x)
compiled = torch.compile(model)(x)
dz = float((compiled[0] - eager[0]).abs().max())
ds = float((compiled[1] - eager[1]).abs().max())
print(f"gate: z max|diff|={dz:.3e} score max|diff|={ds:.3e}")
if dz > 1e-5 or ds > 1e-4:
    print("PARITY GATE FAILED")
    sys.exit(1)
print("PARITY GATE PASSED")
