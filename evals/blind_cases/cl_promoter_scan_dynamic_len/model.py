"""Promoter-activity CNN (DeepSTARR / Basenji-style) for variable-length DNA windows."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResidualDilatedBlock(nn.Module):
    def __init__(self, channels: int, dilation: int, dropout: float = 0.1):
        super().__init__()
        self.norm = nn.BatchNorm1d(channels)
        self.conv = nn.Conv1d(channels, channels, kernel_size=3, padding=dilation, dilation=dilation)
        self.proj = nn.Conv1d(channels, channels, kernel_size=1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.conv(F.gelu(self.norm(x)))
        h = self.proj(F.gelu(h))
        return x + self.drop(h)


class PromoterCNN(nn.Module):
    def __init__(self, channels: int = 64, n_blocks: int = 3, n_bins: int = 8, n_tasks: int = 2):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv1d(4, channels, kernel_size=15, padding=7),
            nn.BatchNorm1d(channels),
            nn.GELU(),
            nn.MaxPool1d(2),
        )
        self.blocks = nn.Sequential(*[ResidualDilatedBlock(channels, 2 ** i) for i in range(n_blocks)])
        # summarise the sequence into a fixed number of positional bins so the
        # head keeps coarse "where along the promoter" information
        self.bin_pool = nn.AdaptiveAvgPool1d(n_bins)
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * n_bins, 128),
            nn.GELU(),
            nn.Dropout(0.2),
            nn.Linear(128, n_tasks),
        )

    def forward(self, onehot: torch.Tensor) -> torch.Tensor:
        # onehot: (batch, 4, length)
        x = self.stem(onehot)
        x = self.blocks(x)
        x = self.bin_pool(x)
        return self.head(x)
