"""A frame scorer: a stride-2 Conv1d, then a position ramp built with torch.linspace over the conv's output
length. Exported with a dynamic `frames` Dim, export fails with "Constraints violated (frames)" and suggests
`frames = 32` (a static dim): linspace takes its step count as a plain int, so the size was fixed there, and
the guard torch prints is the conv's length formula. FIXED=1 builds the ramp from torch.arange (symbolic)."""
import os

import torch
import torch.nn as nn
from torch.export import Dim, export


class Scorer(nn.Module):
    def __init__(self, ch=4, d=8):
        super().__init__()
        self.conv = nn.Conv1d(ch, d, kernel_size=3, stride=2, padding=1)
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        h = self.conv(x).transpose(1, 2)                  # (batch, T, d), T = (frames - 1) // 2 + 1
        T = h.shape[1]
        if os.environ.get("FIXED") == "1":
            ramp = 1.0 - torch.arange(T, dtype=h.dtype) / (T - 1)
        else:
            ramp = torch.linspace(1.0, 0.0, T, dtype=h.dtype)
        return self.out((h * ramp[None, :, None]).sum(1))


model = Scorer().eval()
ep = export(model, (torch.randn(2, 4, 32),), dynamic_shapes={"x": {2: Dim("frames", min=8, max=1024)}})
for n in (9, 100):
    x = torch.randn(2, 4, n)
    print("frames", n, "max diff vs eager", float((ep.module()(x) - model(x)).abs().max()))
