"""Small conv encoder used for the product-image retrieval prototype."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, stride=1, norm="batch"):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        if norm == "instance":
            # instance norm keeps the embedding insensitive to per-image lighting/contrast
            self.norm = nn.InstanceNorm2d(cout)
        else:
            self.norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class RetrievalEncoder(nn.Module):
    def __init__(self, width=32, embed_dim=64):
        super().__init__()
        self.stem = ConvBlock(3, width)
        self.stage1 = ConvBlock(width, width * 2, stride=2)
        self.stage2 = ConvBlock(width * 2, width * 4, stride=2)
        self.proj = nn.Conv2d(width * 4, embed_dim, 1, bias=False)
        self.head_norm = nn.InstanceNorm2d(embed_dim)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        x = self.stem(x)
        x = self.stage1(x)
        x = self.stage2(x)
        x = self.head_norm(self.proj(x))
        x = self.pool(x).flatten(1)
        return F.normalize(x, dim=-1)
