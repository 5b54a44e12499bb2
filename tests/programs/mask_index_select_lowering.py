"""Pooling by a boolean mask, as transformers' BartForSequenceClassification picks its eos states (blind A/B batch 57's
ef): under fullgraph=True h[mask] has a data-dependent (unbacked) size, and Inductor's select lowering after
.view(B, -1, D)[:, -1, :] cannot decide a fact about it. FIXED=1: a fixed-shape gather at the last marked position."""
import os

import torch

B, L, D = 4, 6, 8


def pool(h, mask):
    if os.environ.get("FIXED") == "1":
        pos = torch.where(mask, torch.arange(L), -1).amax(1)
        return h[torch.arange(B), pos]
    return h[mask, :].view(B, -1, D)[:, -1, :]


torch.manual_seed(0)
h = torch.randn(B, L, D)
mask = torch.zeros(B, L, dtype=torch.bool)
mask[:, -1] = True
out = torch.compile(pool, fullgraph=True)(h, mask)
print("pooled", tuple(out.shape), f"{out.sum().item():.4f}")
