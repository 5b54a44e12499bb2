"""Recompiles on every new length: a patch count computed with float division and np.ceil pins the length
(guard `(x.size()[1] / 8) == 3.0`), so automatic dynamic cannot keep it symbolic (blind A/B batch 12,
PatchTST-style patching)."""
import numpy as np
import torch
import torch.nn.functional as F


@torch.compile(backend="eager")
def patch_means(x, patch=8):
    n = int(np.ceil(x.shape[1] / patch))
    x = F.pad(x, (0, n * patch - x.shape[1]))
    return x.reshape(x.shape[0], n, patch).mean(-1)


for length in (24, 40, 56, 72):
    print(length, tuple(patch_means(torch.randn(2, length)).shape))
