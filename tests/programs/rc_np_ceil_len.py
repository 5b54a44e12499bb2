"""A keyword-spotting encoder's subsampling front end under torch.compile(dynamic=True), scored on length
buckets: the output length is int(np.ceil(T / stride)), and Dynamo guards the float T / 4 to its exact value
(Eq(IntTrueDiv(s, 4), 72.0)), so every new length compiles again; the `if pad:` after it is where Dynamo then
makes T static (blind A/B batch 46). FIXED=1 computes the length as (T + stride - 1) // stride: one graph."""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Subsample(nn.Module):
    def __init__(self, mels=16, dim=32, stride=4):
        super().__init__()
        self.stride = stride
        self.conv = nn.Conv1d(mels, dim, kernel_size=3, padding=1)
        self.proj = nn.Linear(dim * stride, dim)

    def out_frames(self, n_frames):
        if os.environ.get("FIXED"):
            return (n_frames + self.stride - 1) // self.stride
        return int(np.ceil(n_frames / self.stride))

    def forward(self, x):
        B, T, M = x.shape
        n_out = self.out_frames(T)
        pad = n_out * self.stride - T
        if pad:
            x = F.pad(x, (0, 0, 0, pad))
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return self.proj(h.reshape(B, n_out, -1)).mean(1)


torch.manual_seed(0)
model = torch.compile(Subsample().eval(), dynamic=True, backend="eager")
with torch.no_grad():
    for T in (96, 64, 128, 160, 96):
        out = model(torch.randn(2, T, 16))
        print(f"T={T}: out {tuple(out.shape)}")
