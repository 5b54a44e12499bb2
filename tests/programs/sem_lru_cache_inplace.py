"""A keyword-spotting encoder whose attention adds a relative-position prior from an lru_cache'd builder and
scales it in place (`bias.mul_(...)`). Eager's cache hands every call the same tensor, so the prior grows at each
call; compiled, Dynamo ignores the cache wrapper and builds a fresh prior per call. A CI gate comparing compiled
with eager fails, and eager is the side that is wrong. FIXED=1 scales out of place."""
import functools
import os
import sys

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=16)
def distance_prior(t, heads):
    pos = torch.arange(t, dtype=torch.float32)
    return -(pos[None, :] - pos[:, None]).abs()[None].expand(heads, t, t) / t


class Attention(nn.Module):
    def __init__(self, d=32, heads=4, scale=1.5):
        super().__init__()
        self.h, self.scale = heads, scale
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        if os.environ.get("FIXED") == "1":
            bias = distance_prior(t, self.h) * self.scale
        else:
            bias = distance_prior(t, self.h)
            bias.mul_(self.scale)
        att = (q @ k.transpose(-2, -1)) / (d // self.h) ** 0.5 + bias
        return self.out((att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))


torch.manual_seed(0)
model = nn.Sequential(Attention(), nn.GELU(), Attention()).eval()
compiled = torch.compile(model, backend="eager")
worst = 0.0
with torch.no_grad():
    for i in range(3):
        x = torch.randn(4, 12, 32)
        diff = (model(x) - compiled(x)).abs().max().item()
        worst = max(worst, diff)
        print(f"batch {i}: max|eager-compiled| = {diff:.3e}")
if worst > 1e-4:
    sys.exit(f"FAIL: compiled diverges from eager (max diff {worst:.3e})")
print("PASS")
