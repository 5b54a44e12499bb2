import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@functools.lru_cache(maxsize=16)
def distance_prior(T, n_heads):
    """ALiBi-style linear distance penalty, one slope per head: (H, T, T)."""
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)])
    pos = torch.arange(T, dtype=torch.float32)
    dist = (pos[None, :] - pos[:, None]).abs()
    return -slopes[:, None, None] * dist[None]


class ConvSubsample(nn.Module):
    def __init__(self, n_mels, dim):
        super().__init__()
        self.conv1 = nn.Conv1d(n_mels, dim, 3, stride=2, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)

    def forward(self, feats):  # (B, T, n_mels)
        x = F.gelu(self.conv1(feats.transpose(1, 2)))
        x = F.gelu(self.conv2(x))
        return x.transpose(1, 2)


class BiasedSelfAttention(nn.Module):
    def __init__(self, dim, n_heads, prior_scale):
        super().__init__()
        self.h = n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.prior_scale = prior_scale

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        bias = distance_prior(T, self.h)
        bias.mul_(self.prior_scale)
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // self.h) + bias
        y = scores.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(B, T, D))


class ConformerLiteBlock(nn.Module):
    def __init__(self, dim, n_heads, prior_scale):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = BiasedSelfAttention(dim, n_heads, prior_scale)
        self.ln2 = nn.LayerNorm(dim)
        self.dw = nn.Conv1d(dim, dim, 15, padding=7, groups=dim)
        self.ln3 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.dw(self.ln2(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ff(self.ln3(x))


class KeywordSpotter(nn.Module):
    def __init__(self, n_mels=40, dim=96, depth=4, n_heads=4, n_keywords=12, prior_scale=1.5):
        super().__init__()
        self.sub = ConvSubsample(n_mels, dim)
        self.blocks = nn.ModuleList(ConformerLiteBlock(dim, n_heads, prior_scale) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_keywords)

    def forward(self, feats):
        x = self.sub(feats)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x).mean(1))
