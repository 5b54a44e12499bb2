"""Single-lead ECG rhythm classifier (patch embedding + pre-norm transformer)."""
import math
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

RHYTHM_CLASSES = ["sinus", "afib", "aflutter", "svt", "vt", "pvc_bigeminy", "av_block", "noise"]


def setup_runtime(seed: int = 1234, threads: int | None = None) -> None:
    """Shared by training, eval and CI entry points."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if threads is None:
        threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    torch.set_num_threads(threads)
    torch.set_float32_matmul_precision("medium")
    torch.backends.cudnn.benchmark = True


class PatchEmbed(nn.Module):
    def __init__(self, patch=25, dim=128):
        super().__init__()
        self.proj = nn.Conv1d(1, dim, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):                      # x: (B, 1, L)
        return self.norm(self.proj(x).transpose(1, 2))


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        return self.out(a.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.n1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.n2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, mlp_ratio * dim), nn.GELU(), nn.Linear(mlp_ratio * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.mlp(self.n2(x))


class ECGRhythmNet(nn.Module):
    def __init__(self, sig_len=2500, patch=25, dim=128, depth=4, heads=4, n_classes=len(RHYTHM_CLASSES)):
        super().__init__()
        n_tok = sig_len // patch
        self.embed = PatchEmbed(patch, dim)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n_tok + 1, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, sig):                    # sig: (B, L) in mV
        x = self.embed(sig.unsqueeze(1))
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x[:, 0]))


def synthetic_ecg(batch: int, sig_len: int = 2500, fs: int = 250, generator=None) -> torch.Tensor:
    """Cheap synthetic single-lead traces: QRS-like spikes + baseline wander + noise."""
    t = torch.arange(sig_len) / fs
    hr = 50 + 70 * torch.rand(batch, 1, generator=generator)                 # bpm
    phase = (t.unsqueeze(0) * hr / 60.0) % 1.0
    qrs = torch.exp(-((phase - 0.3) ** 2) / 2e-4) * 1.2
    twave = 0.3 * torch.exp(-((phase - 0.6) ** 2) / 4e-3)
    wander = 0.15 * torch.sin(2 * math.pi * 0.3 * t + 6.28 * torch.rand(batch, 1, generator=generator))
    noise = 0.03 * torch.randn(batch, sig_len, generator=generator)
    return qrs + twave + wander + noise
