"""Blind A/B batch 44: a temporal fuser warps the previous frame's class probabilities with F.grid_sample
(bilinear, border) inside a compiled step on CPU; Inductor generates its own gather code for it, fused with the
softmax and blend around it (no fallback kernel), slower than ATen's grid_sample there."""
import torch
import torch.nn.functional as F


@torch.compile
def fuse(logits, prev, flow):
    n, _, h, w = logits.shape
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, h), torch.linspace(-1, 1, w), indexing="ij")
    grid = torch.stack((xs, ys), -1).unsqueeze(0).expand(n, h, w, 2) + flow.permute(0, 2, 3, 1)
    warped = F.grid_sample(prev, grid, mode="bilinear", padding_mode="border", align_corners=True)
    return 0.7 * logits.softmax(1) + 0.3 * warped


torch.manual_seed(0)
prev = torch.rand(1, 5, 24, 32)
out = fuse(torch.randn(1, 5, 24, 32), prev, 0.01 * torch.randn(1, 2, 24, 32))
print("labels", out.argmax(1).flatten()[:8].tolist())
