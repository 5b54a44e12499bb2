"""A layout model served under torch.compile(dynamic=True) resamples each page to its training DPI: the caller passes
the float 150 / dpi as F.interpolate's scale_factor, which decides the output's size, so every new DPI compiles again
(`resample == 0.75`; blind A/B batch 46). INT_SIZE=1 computes the working size from ints in the caller and passes
size=: one graph."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

INT_SIZE = bool(os.environ.get("INT_SIZE"))


class Layout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)

    def forward(self, page, resample=None, h=None, w=None):
        if INT_SIZE:
            x = F.interpolate(page, size=(h, w), mode="bilinear", align_corners=False)
        else:
            x = F.interpolate(page, scale_factor=resample, mode="bilinear", align_corners=False)
        return self.conv(x).sigmoid()


torch.manual_seed(0)
model = torch.compile(Layout().eval(), dynamic=True, backend="eager")
with torch.no_grad():
    for dpi in (200, 150, 240, 100, 200):
        page = torch.randn(1, 1, 64, 48)
        out = model(page, h=64 * 150 // dpi, w=48 * 150 // dpi) if INT_SIZE else model(page, 150 / dpi)
        print(f"dpi {dpi}: {tuple(out.shape)}")
