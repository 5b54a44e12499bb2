"""A small segmentation UNet exported with dynamic height and width: one pooling stage and a skip
connection concatenated after upsampling, so only even sizes line up (eager fails on odd ones too).
export raises a constraint violation whose suggested fix makes both dims multiples of 2.
FIX=skip pads the upsampled map to its skip's size; FIX=negpad pads the input and crops the output with
a negative pad; FIX=slice crops with a slice and FIX=negpad_mod pads by (2 - w % 2) % 2 (export cannot prove
either's guard)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

FIX = os.environ.get("FIX", "")


class Up(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.up = nn.ConvTranspose2d(c, c, 2, stride=2)

    def forward(self, x, skip):
        x = self.up(x)
        if FIX == "skip":
            x = F.pad(x, [0, skip.shape[-1] - x.shape[-1], 0, skip.shape[-2] - x.shape[-2]])
        return torch.cat([skip, x], 1)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inc, self.pool = nn.Conv2d(3, 4, 3, padding=1), nn.MaxPool2d(2)
        self.down, self.up, self.out = nn.Conv2d(4, 4, 3, padding=1), Up(4), nn.Conv2d(8, 2, 1)

    def body(self, x):
        a = self.inc(x)
        return self.out(self.up(self.down(self.pool(a)), a))

    def forward(self, x):
        if FIX not in ("slice", "negpad", "negpad_mod"):
            return self.body(x)
        h, w = x.shape[-2:]
        pad = (0, (2 - w % 2) % 2, 0, (2 - h % 2) % 2) if FIX == "negpad_mod" else (0, (-w) % 2, 0, (-h) % 2)
        y = self.body(F.pad(x, pad))
        return y[..., :h, :w] if FIX == "slice" else F.pad(y, (0, w - y.shape[-1], 0, h - y.shape[-2]))


model = TinyUNet().eval()
ep = torch.export.export(model, (torch.randn(1, 3, 64, 80),),
                         dynamic_shapes={"x": {2: Dim("height", min=16, max=512), 3: Dim("width", min=16, max=512)}})
page = torch.randn(1, 3, 75, 61)
print("exported; odd page", tuple(ep.module()(page).shape), "max diff",
      f"{(ep.module()(page) - model(page)).abs().max().item():.1e}")
