"""Export the bedside-vitals anomaly scorer for the edge gateway.

The gateway streams windows of very different lengths (a few seconds after a
sensor reconnect, up to ~2 minutes of history), so the exported program must
accept any number of frames between MIN_FRAMES and MAX_FRAMES.
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim, export

N_CHANNELS = 6          # HR, SpO2, RR, SBP, DBP, temp
D_MODEL = 64
N_HEADS = 4
N_LAYERS = 2
N_CLASSES = 4           # normal / deterioration / artefact / sensor-off
MIN_FRAMES = 32
MAX_FRAMES = 4096


class ConvStem(nn.Module):
    def __init__(self, c_in, d):
        super().__init__()
        self.conv1 = nn.Conv1d(c_in, d, kernel_size=5, padding=2)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1)
        self.norm = nn.GroupNorm(8, d)

    def forward(self, x):                      # x: (B, C, T)
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.norm(self.conv2(x)))   # (B, D, T')
        return x.transpose(1, 2)               # (B, T', D)


class EncoderBlock(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q = q.view(B, T, self.h, D // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, D // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, D // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.ff(self.ln2(x))


class RecencyPool(nn.Module):
    """Attention pooling with a learned preference for the most recent frames."""

    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.log_decay = nn.Parameter(torch.tensor(math.log(3.0)))

    def forward(self, x):                      # x: (B, T, D)
        T = x.shape[1]
        age = torch.linspace(1.0, 0.0, T, dtype=x.dtype, device=x.device)
        logits = self.score(x).squeeze(-1) - self.log_decay.exp() * age
        w = torch.softmax(logits, dim=-1)
        return torch.einsum("bt,btd->bd", w, x)


class VitalsScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([80.0, 96.0, 16.0, 120.0, 75.0, 36.8]).view(1, -1, 1))
        self.register_buffer("std", torch.tensor([15.0, 3.0, 4.0, 20.0, 12.0, 0.7]).view(1, -1, 1))
        self.stem = ConvStem(N_CHANNELS, D_MODEL)
        self.blocks = nn.ModuleList(EncoderBlock(D_MODEL, N_HEADS) for _ in range(N_LAYERS))
        self.pool = RecencyPool(D_MODEL)
        self.head = nn.Sequential(nn.LayerNorm(D_MODEL), nn.Linear(D_MODEL, N_CLASSES))

    def forward(self, vitals):                 # vitals: (B, C, T) raw units
        x = (vitals - self.mean) / self.std
        x = self.stem(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.pool(x))


def synth_window(batch, frames, seed):
    g = torch.Generator().manual_seed(seed)
    base = torch.tensor([80.0, 96.0, 16.0, 120.0, 75.0, 36.8]).view(1, -1, 1)
    scale = torch.tensor([10.0, 2.0, 3.0, 15.0, 10.0, 0.4]).view(1, -1, 1)
    t = torch.linspace(0, 1, frames).view(1, 1, -1)
    drift = torch.randn(batch, N_CHANNELS, 1, generator=g) * t
    noise = torch.randn(batch, N_CHANNELS, frames, generator=g) * 0.3
    return base + scale * (drift + noise)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="vitals_scorer.pt2")
    ap.add_argument("--example-frames", type=int, default=256)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = VitalsScorer().eval()

    example = synth_window(batch=4, frames=args.example_frames, seed=1)
    with torch.no_grad():
        ref = model(example)
    print(f"eager ok: logits {tuple(ref.shape)}")

    batch = Dim("batch", min=1, max=64)
    frames = Dim("frames", min=MIN_FRAMES, max=MAX_FRAMES)
    dynamic_shapes = {"vitals": {0: batch, 2: frames}}

    t0 = time.time()
    ep = export(model, (example,), dynamic_shapes=dynamic_shapes)
    print(f"export ok in {time.time() - t0:.1f}s")
    print(ep.range_constraints)

    served = ep.module()
    worst = 0.0
    for i, (b, n) in enumerate([(1, 64), (3, 300), (8, 1200), (2, 4000)]):
        w = synth_window(batch=b, frames=n, seed=100 + i)
        with torch.no_grad():
            diff = (served(w) - model(w)).abs().max().item()
        worst = max(worst, diff)
        print(f"  batch={b:2d} frames={n:5d}  max|exported - eager| = {diff:.2e}")
    assert worst < 1e-4, worst

    torch.export.save(ep, args.out)
    print(f"saved {args.out} ({os.path.getsize(args.out) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
