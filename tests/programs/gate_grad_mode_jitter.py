"""A parity gate whose model adds input jitter whenever grad mode is on (blind A/B batch 51): eager is scored under
inference_mode (no jitter), compiled with grad on (one backward as a smoke test), so the gate fails, with or without
torch.compile; the compiled and eager runs differ only by their random draws. FIXED=1: jitter only in training."""
import os
import sys

import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))

    def forward(self, x):
        noisy = self.training if os.environ.get("FIXED") == "1" else torch.is_grad_enabled()
        if noisy:
            x = x * (1 + 0.15 * torch.randn_like(x))
        return self.net(x).squeeze(-1)


torch.manual_seed(0)
model = Scorer().eval()
x = torch.randn(256, 8)
with torch.inference_mode():
    ref = model(x)
compiled = torch.compile(model)
out = compiled(x)
out.sum().backward()
diff = (out.detach() - ref).abs()
print(f"max |diff| {diff.max().item():.3e}, rows outside {(diff > 1e-4).sum().item()} / {len(x)}")
sys.exit(0 if diff.max().item() < 1e-4 else 1)
