"""A patch encoder that normalises channels with BatchNorm1d on a transposed input and then .view()s the result
(blind A/B batch 58's ei, pytorch#192668): eager CPU BatchNorm returns a contiguous tensor, its fake kernel keeps the
input's strides, so the view fails while torch.compile traces (any backend). FIXED=1: .reshape."""
import os

import torch
import torch.nn as nn


class PatchEncoder(nn.Module):
    def __init__(self, channels=3, length=32, patch=8):
        super().__init__()
        self.channels, self.patch, self.n = channels, patch, length // patch
        self.norm = nn.BatchNorm1d(channels)
        self.proj = nn.Linear(patch, 16)

    def forward(self, x):                      # x: (batch, length, channels)
        b = x.shape[0]
        x = self.norm(x.transpose(1, 2))       # (batch, channels, length)
        if os.environ.get("FIXED") == "1":
            x = x.reshape(b * self.channels, self.n, self.patch)
        else:
            x = x.view(b * self.channels, self.n, self.patch)
        return self.proj(x).mean(1)


torch.manual_seed(0)
enc = torch.compile(PatchEncoder())
out = enc(torch.randn(4, 32, 3))
print("encoded", tuple(out.shape))
