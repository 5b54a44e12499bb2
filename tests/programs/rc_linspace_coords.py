"""Blind A/B batch 45: a CoordConv layer builds its coordinate channels with torch.linspace(-1, 1, steps=h) inside a
forward compiled with dynamic=True; linspace takes steps as a plain int, so H and W are made constants again and
every new tile size compiles again (in a short run: two recompiles that look like automatic dynamic's one).
ARANGE=1 builds the same grid from torch.arange (one graph for every size after the first change)."""
import os

import torch
import torch.nn as nn

ARANGE = bool(os.environ.get("ARANGE"))


def grid(n, ref):
    if ARANGE:
        return torch.arange(n, device=ref.device, dtype=ref.dtype) * (2.0 / (n - 1)) - 1.0
    return torch.linspace(-1.0, 1.0, steps=n, device=ref.device, dtype=ref.dtype)


class CoordConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(5, 4, 3, padding=1)

    def forward(self, x):
        n, _, h, w = x.shape
        ys, xs = grid(h, x), grid(w, x)
        yy = ys.view(1, 1, h, 1).expand(n, 1, h, w)
        xx = xs.view(1, 1, 1, w).expand(n, 1, h, w)
        return self.conv(torch.cat([x, yy, xx], 1)).mean((2, 3))


torch.manual_seed(0)
model = torch.compile(CoordConv().eval(), dynamic=True, backend="eager")
with torch.no_grad():
    for h, w in ((16, 24), (20, 24), (20, 28)):
        print(h, w, [round(v, 4) for v in model(torch.randn(2, 3, h, w))[0].tolist()])
