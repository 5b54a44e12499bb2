"""Pressure-transient anomaly detector used by the pipeline monitoring service.

Raw transducer readings (Pa, absolute) are cut into fixed windows upstream.
The model standardises every window per channel, encodes it with a small
dilated 1-D conv stack and reconstructs it; the anomaly score is the
per-window reconstruction error in standardised units.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class WindowStandardize(nn.Module):
    """Per-window, per-channel z-scoring with a floor on the scale."""

    def __init__(self, min_std: float = 1e-3):
        super().__init__()
        self.min_var = min_std * min_std

    def forward(self, x):
        # x: (batch, channels, time)
        mean = x.mean(dim=-1, keepdim=True)
        mean_sq = (x * x).mean(dim=-1, keepdim=True)
        var = (mean_sq - mean * mean).clamp_min(self.min_var)
        return (x - mean) * torch.rsqrt(var)


class DilatedBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.conv = nn.Conv1d(ch, ch, kernel_size=3, padding=dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, ch)
        self.proj = nn.Conv1d(ch, ch, kernel_size=1)

    def forward(self, x):
        h = F.gelu(self.norm(self.conv(x)))
        return x + self.proj(h)


class PressureAutoencoder(nn.Module):
    def __init__(self, in_ch=4, width=64, latent=16, window=256, depth=4):
        super().__init__()
        self.standardize = WindowStandardize()
        self.stem = nn.Conv1d(in_ch, width, kernel_size=5, padding=2)
        self.encoder = nn.Sequential(*[DilatedBlock(width, 2 ** i) for i in range(depth)])
        self.down = nn.Conv1d(width, latent, kernel_size=4, stride=4)
        self.up = nn.ConvTranspose1d(latent, width, kernel_size=4, stride=4)
        self.decoder = nn.Sequential(*[DilatedBlock(width, 2 ** i) for i in reversed(range(depth))])
        self.head = nn.Conv1d(width, in_ch, kernel_size=1)
        self.window = window

    def forward(self, raw):
        z = self.standardize(raw)
        h = self.encoder(self.stem(z))
        h = self.decoder(self.up(F.gelu(self.down(h))))
        recon = self.head(h)
        # anomaly score: mean squared reconstruction error per window
        score = (recon - z).pow(2).mean(dim=(1, 2))
        return score, z


def synth_windows(n, in_ch=4, window=256, anomaly_rate=0.1, seed=0):
    """Line-pressure windows: ~101.3 kPa absolute with slow drift, pump ripple and
    sensor noise of a few Pa; anomalies are short water-hammer transients."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(window, dtype=torch.float32)
    base = 101325.0 + 40.0 * torch.randn(n, in_ch, 1, generator=g)
    drift = 0.01 * torch.randn(n, in_ch, 1, generator=g) * t
    phase = 2 * math.pi * torch.rand(n, in_ch, 1, generator=g)
    ripple = 2.5 * torch.sin(2 * math.pi * t / 17.0 + phase)
    noise = 1.5 * torch.randn(n, in_ch, window, generator=g)
    x = base + drift + ripple + noise
    labels = (torch.rand(n, generator=g) < anomaly_rate).long()
    for i in torch.nonzero(labels).flatten().tolist():
        start = int(torch.randint(0, window - 24, (1,), generator=g))
        amp = 15.0 + 10.0 * float(torch.rand(1, generator=g))
        decay = torch.exp(-torch.arange(24, dtype=torch.float32) / 6.0)
        x[i, :, start:start + 24] += amp * decay * torch.sin(torch.arange(24) * 1.3)
    return x, labels
