import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k, stride):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, stride=stride, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        return F.gelu(self.bn(self.conv(x)))


class VibNet(nn.Module):
    """Small 1D CNN + spectral branch for bearing fault classification."""

    def __init__(self, n_classes=5, width=32):
        super().__init__()
        self.stem = ConvBlock(1, width, 15, 2)
        self.blocks = nn.Sequential(
            ConvBlock(width, width, 7, 2),
            ConvBlock(width, 2 * width, 7, 2),
            ConvBlock(2 * width, 2 * width, 5, 2),
            ConvBlock(2 * width, 4 * width, 5, 2),
        )
        self.spec_proj = nn.Linear(64, width)
        self.head = nn.Sequential(
            nn.Linear(4 * width + width, 128), nn.GELU(), nn.Dropout(0.1), nn.Linear(128, n_classes)
        )

    def spectral_features(self, x):
        spec = torch.fft.rfft(x.squeeze(1), dim=-1).abs()
        spec = torch.log1p(spec[:, : 64 * 8]).reshape(x.shape[0], 64, 8).mean(-1)
        return F.gelu(self.spec_proj(spec))

    def forward(self, x):
        x = (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
        h = self.blocks(self.stem(x))
        pooled = torch.cat([h.mean(-1), self.spectral_features(x)], dim=1)
        return self.head(pooled)
