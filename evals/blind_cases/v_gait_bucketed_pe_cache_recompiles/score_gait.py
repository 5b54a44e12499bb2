"""Nightly scoring job for the wrist-IMU activity classifier.

Recordings have very different lengths, so the loader buckets them by length
(multiples of 16 frames) to keep padding low.  A small transformer encoder with
sinusoidal positions classifies each recording into one of the activity classes.
"""
import argparse
import math
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_CHANNELS = 6          # accel xyz + gyro xyz
N_CLASSES = 5
BUCKET = 16


class SinusoidalPositions(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.d_model = d_model
        self._table = {}

    def _build(self, length):
        pos = torch.arange(length, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32)
                        * (-math.log(10000.0) / self.d_model))
        pe = torch.zeros(length, self.d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        return pe

    def forward(self, x):
        length = x.shape[1]
        if length not in self._table:
            self._table[length] = self._build(length)
        return x + self._table[length].to(x.dtype)


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, pad_mask):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.n_heads, d // self.n_heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=~pad_mask[:, None, None, :])
        x = x + self.drop(self.out(attn.transpose(1, 2).reshape(b, t, d)))
        x = x + self.drop(self.ff(self.ln2(x)))
        return x


class GaitClassifier(nn.Module):
    def __init__(self, d_model=64, n_heads=4, n_layers=1, d_ff=128, dropout=0.1):
        super().__init__()
        self.stem = nn.Conv1d(N_CHANNELS, d_model, kernel_size=5, padding=2)
        self.pos = SinusoidalPositions(d_model)
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, n_heads, d_ff, dropout) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, N_CLASSES)

    def forward(self, imu, pad_mask):
        # imu: (B, T, C), pad_mask: (B, T) True where padded
        x = self.stem(imu.transpose(1, 2)).transpose(1, 2)
        x = self.pos(x)
        for layer in self.layers:
            x = layer(x, pad_mask)
        x = self.norm(x)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


def make_recordings(n, seed=0):
    rng = random.Random(seed)
    recs = []
    for _ in range(n):
        length = rng.randint(24, 200)
        label = rng.randrange(N_CLASSES)
        t = torch.arange(length, dtype=torch.float32)
        freq = 0.05 + 0.03 * label
        base = torch.sin(2 * math.pi * freq * t)[:, None]
        sig = base * torch.linspace(0.5, 1.5, N_CHANNELS)[None, :] + 0.3 * torch.randn(length, N_CHANNELS)
        recs.append((sig, label))
    return recs


def bucketed_batches(recs, batch_size, seed):
    """Group recordings of similar length; pad each batch to a multiple of BUCKET."""
    rng = random.Random(seed)
    order = sorted(range(len(recs)), key=lambda i: recs[i][0].shape[0])
    chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(chunks)
    for idx in chunks:
        longest = max(recs[i][0].shape[0] for i in idx)
        padded_len = ((longest + BUCKET - 1) // BUCKET) * BUCKET
        imu = torch.zeros(len(idx), padded_len, N_CHANNELS)
        pad_mask = torch.ones(len(idx), padded_len, dtype=torch.bool)
        labels = torch.empty(len(idx), dtype=torch.long)
        for row, i in enumerate(idx):
            sig, lab = recs[i]
            imu[row, :sig.shape[0]] = sig
            pad_mask[row, :sig.shape[0]] = False
            labels[row] = lab
        yield imu, pad_mask, labels


@torch.no_grad()
def score(fwd, recs, batch_size):
    correct = n_seen = 0
    step_times = []
    for imu, pad_mask, labels in bucketed_batches(recs, batch_size, seed=0):
        s0 = time.perf_counter()
        logits = fwd(imu, pad_mask)
        step_times.append(time.perf_counter() - s0)
        correct += (logits.argmax(-1) == labels).sum().item()
        n_seen += labels.numel()
    return correct / n_seen, step_times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--recordings", type=int, default=160)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    recs = make_recordings(args.recordings)
    model = GaitClassifier().eval()
    # weights would come from the training run; the scoring path is what we time here
    fwd = model if args.no_compile else torch.compile(model)

    for p in range(args.passes):
        t0 = time.perf_counter()
        acc, step_times = score(fwd, recs, args.batch_size)
        wall = time.perf_counter() - t0
        step_times.sort()
        print(f"pass {p}: {len(step_times)} batches acc {acc:.3f} time {wall:.1f}s "
              f"median batch {1000 * step_times[len(step_times) // 2]:.1f} ms "
              f"slowest batch {step_times[-1]:.2f}s")


if __name__ == "__main__":
    main()
