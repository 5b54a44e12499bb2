"""A keep probability on an unclamped schedule reaches 1.0625 (blind A/B batch 40: word dropout annealed past its
end). Eager's bernoulli rejects p > 1; the compiled bernoulli (rand < p) does not check, so only the run without
torch.compile fails. --clamp: the schedule clamped to [0, 1], both run."""
import sys

import torch


@torch.compile
def drop(x, keep):
    return x * torch.bernoulli(keep.expand(x.shape)) / keep


torch.manual_seed(0)
x = torch.randn(64, 32)
for epoch in range(6):
    keep = 0.75 + 0.0625 * epoch
    if "--clamp" in sys.argv:
        keep = min(keep, 1.0)
    out = drop(x, torch.tensor(keep))
    print(f"epoch {epoch} keep={keep:.4f} mean={out.mean().item():.4f}")
