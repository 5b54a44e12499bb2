"""Vibration-window classifier used by the bearing-fault service.

Input: (batch, 3, window) accelerometer windows (x/y/z), already z-normalised.
Outputs: fault-class logits and a remaining-useful-life estimate.
"""
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class NetConfig:
    in_channels: int = 3
    window: int = 1024
    widths: tuple = (32, 64, 96, 128)
    kernel: int = 7
    num_classes: int = 6
    hidden: int = 256
    dropout: float = 0.2
    class_names: list = field(default_factory=lambda: [
        "healthy", "inner_race", "outer_race", "ball", "cage", "misalignment"])


class ResBlock1d(nn.Module):
    def __init__(self, c_in, c_out, kernel, stride):
        super().__init__()
        pad = kernel // 2
        self.conv1 = nn.Conv1d(c_in, c_out, kernel, stride=stride, padding=pad, bias=False)
        self.bn1 = nn.BatchNorm1d(c_out)
        self.conv2 = nn.Conv1d(c_out, c_out, kernel, padding=pad, bias=False)
        self.bn2 = nn.BatchNorm1d(c_out)
        self.skip = (
            nn.Sequential(nn.Conv1d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm1d(c_out))
            if (stride != 1 or c_in != c_out) else nn.Identity()
        )

    def forward(self, x):
        h = F.silu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.silu(h + self.skip(x))


class BearingNet(nn.Module):
    def __init__(self, cfg: NetConfig):
        super().__init__()
        self.cfg = cfg
        self.stem = nn.Sequential(
            nn.Conv1d(cfg.in_channels, cfg.widths[0], 15, stride=2, padding=7, bias=False),
            nn.BatchNorm1d(cfg.widths[0]),
            nn.SiLU(),
        )
        blocks, c = [], cfg.widths[0]
        for w in cfg.widths:
            blocks.append(ResBlock1d(c, w, cfg.kernel, stride=2))
            c = w
        self.blocks = nn.Sequential(*blocks)
        # flattened size depends on window / strides; let the first batch decide
        self.trunk = nn.Sequential(nn.Flatten(), nn.LazyLinear(cfg.hidden), nn.SiLU(), nn.Dropout(cfg.dropout))
        self.cls_head = nn.Linear(cfg.hidden, cfg.num_classes)
        self.rul_head = nn.Linear(cfg.hidden, 1)

    def forward(self, x):
        h = self.blocks(self.stem(x))
        z = self.trunk(h)
        return self.cls_head(z), F.softplus(self.rul_head(z)).squeeze(-1)


def build_model(cfg: NetConfig | None = None) -> BearingNet:
    return BearingNet(cfg or NetConfig())
