"""A float argument on a schedule fed to torch.full_like (blind A/B batch 40: a denoising autoencoder's masking
ratio on a cosine curriculum): the float becomes dynamic after its first change, but full_like takes its fill
value only as a Python number, so Dynamo puts each new value back and recompiles on every step. --fixed: the
mask as tensor arithmetic (rand_like >= p), one recompile (the float made dynamic), then stable."""
import math
import sys

import torch


def mask(x, ratio):
    if ratio > 0:
        if "--fixed" in sys.argv:
            keep = (torch.rand_like(x[:, :1]) >= ratio).to(x.dtype)
        else:
            keep = torch.bernoulli(torch.full_like(x[:, :1], 1.0 - ratio))
        x = x * keep
    return torch.tanh(x).sum()


step = torch.compile(mask)
torch.manual_seed(0)
for i in range(6):
    ratio = 0.1 + 0.25 * (1 + math.cos(math.pi * i / 6))
    out = step(torch.randn(8, 16), ratio)
print(f"last ratio {ratio:.3f} out {out.item():.3f}")
