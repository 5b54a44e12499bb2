"""Infrasound event detector for microbarometer arrays.

Input: raw sensor windows (B, C, T) with C = 4 channels per station:
  0: absolute pressure [Pa]   1: temperature [degC]   2: wind speed [m/s]   3: humidity [%]
Sampled at 20 Hz, 60 s windows (T = 1200).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class WindowStandardize(nn.Module):
    """Per-window, per-channel z-scoring so the detector is invariant to slow drifts in the
    sensor baseline (weather fronts move absolute pressure by hundreds of Pa)."""

    def __init__(self, eps: float = 1e-3):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        std, mean = torch.std_mean(x, dim=-1, keepdim=True)
        return (x - mean) / (std + self.eps)


class ConvBlock(nn.Module):
    def __init__(self, c_in, c_out, k, stride):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, k, stride=stride, padding=k // 2)
        self.norm = nn.GroupNorm(8, c_out)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


class InfrasoundDetector(nn.Module):
    def __init__(self, n_channels=4, width=64, n_classes=3):
        super().__init__()
        self.standardize = WindowStandardize()
        self.features = nn.Sequential(
            ConvBlock(n_channels, width, 9, 2),
            ConvBlock(width, width, 7, 2),
            ConvBlock(width, 2 * width, 5, 2),
            ConvBlock(2 * width, 2 * width, 5, 2),
            ConvBlock(2 * width, 2 * width, 3, 2),
        )
        self.head = nn.Sequential(nn.Linear(4 * width, width), nn.SiLU(), nn.Linear(width, n_classes))

    def forward(self, raw):
        x = self.standardize(raw)
        h = self.features(x)
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=1)
        return self.head(pooled)
