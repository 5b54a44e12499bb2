"""Small keyword-spotting CNN used by the on-device wake-word team."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GlobalCMVN(nn.Module):
    """Cepstral mean/variance normalisation with statistics from the training set."""

    def __init__(self, num_bins: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(num_bins, 1))
        self.register_buffer("istd", torch.ones(num_bins, 1))

    def load_stats(self, mean: torch.Tensor, std: torch.Tensor):
        self.mean.copy_(mean.view(-1, 1))
        self.istd.copy_(1.0 / std.clamp_min(1e-5).view(-1, 1))

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        # feats: (B, num_bins, T); features can be long, avoid an extra copy
        return feats.sub_(self.mean).mul_(self.istd)


class DSConvBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Conv1d(cin, cin, kernel_size=5, stride=stride, padding=2, groups=cin, bias=False)
        self.pw = nn.Conv1d(cin, cout, kernel_size=1, bias=False)
        self.bn = nn.BatchNorm1d(cout)

    def forward(self, x):
        return F.silu(self.bn(self.pw(self.dw(x))))


class KWSNet(nn.Module):
    def __init__(self, num_bins=40, channels=(64, 96, 128), num_keywords=12):
        super().__init__()
        self.cmvn = GlobalCMVN(num_bins)
        layers, cin = [], num_bins
        for i, c in enumerate(channels):
            layers.append(DSConvBlock(cin, c, stride=2 if i > 0 else 1))
            cin = c
        self.encoder = nn.Sequential(*layers)
        self.attn = nn.Conv1d(cin, 1, kernel_size=1)
        self.head = nn.Linear(cin, num_keywords)

    def forward(self, feats):
        x = self.cmvn(feats)
        x = self.encoder(x)
        w = torch.softmax(self.attn(x), dim=-1)          # attention pooling over time
        pooled = (x * w).sum(-1)
        return self.head(pooled)
