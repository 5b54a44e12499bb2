import math

import torch
import torch.nn as nn
import torch.nn.functional as F

N_CLASSES = 4  # healthy, cavitation, bearing wear, misalignment


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, k, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, k, padding=dilation * (k // 2), dilation=dilation)
        self.bn = nn.BatchNorm1d(c_out)

    def forward(self, x):
        return F.gelu(self.bn(self.conv(x)))


class AttnPool(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.score = nn.Conv1d(c, 1, 1)

    def forward(self, h):
        w = torch.softmax(self.score(h), dim=-1)
        return (h * w).sum(-1)


class PumpNet(nn.Module):
    """3-axis accelerometer window (B, 3, T) -> fault class logits. Works for any T."""

    def __init__(self, width=48):
        super().__init__()
        self.stem = ConvBlock(3, width, 7)
        self.blocks = nn.Sequential(
            ConvBlock(width, width, 5, dilation=1),
            ConvBlock(width, width, 5, dilation=2),
            ConvBlock(width, width, 5, dilation=4),
        )
        self.pool = AttnPool(width)
        self.head = nn.Sequential(nn.Linear(2 * width, 64), nn.GELU(), nn.Linear(64, N_CLASSES))

    def forward(self, x):
        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
        h = self.blocks(self.stem(x))
        feat = torch.cat([self.pool(h), h.amax(-1)], dim=-1)
        return self.head(feat)


def make_windows(n, T, g, fs=None):
    """Synthetic accelerometer windows; fault classes add characteristic tones/impulses."""
    fs = fs or 250.0
    t = torch.arange(T) / fs
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    x = 0.3 * torch.randn(n, 3, T, generator=g)
    base_f = 24.0 + 2 * torch.rand(n, 1, 1, generator=g)
    x += torch.sin(2 * math.pi * base_f * t)
    for i, c in enumerate(y.tolist()):
        if c == 1:
            x[i] += 0.8 * torch.randn(3, T, generator=g) * (torch.rand(1, T, generator=g) > 0.7)
        elif c == 2:
            x[i, 1] += 0.7 * torch.sin(2 * math.pi * 87.0 * t)
        elif c == 3:
            x[i, 0] += 0.9 * torch.sin(2 * math.pi * 2 * base_f[i, 0, 0] * t)
    return x, y
