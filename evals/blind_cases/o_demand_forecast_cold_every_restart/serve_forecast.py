"""Demand-forecast scoring worker.

On start-up the worker loads the model, estimates target normalisation from a
sample of the recent history, compiles the model and warms it up, then scores
request batches. The Inductor cache lives in ./compile_cache so that restarts
(deploys, autoscaling) should come up warm.
"""
import os

os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile_cache"))

import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

N_STORES = 64
N_FEATS = 12
HIST = 56
HORIZON = 14


def load_history(n_series=4000):
    """Stand-in for the warehouse query: last HIST days of sales per (store, sku) series."""
    g = torch.Generator().manual_seed(1234)
    level = torch.rand(n_series, 1, generator=g) * 80 + 20
    season = torch.sin(torch.arange(HIST).float() * 2 * np.pi / 7)[None, :] * level * 0.2
    noise = torch.randn(n_series, HIST, generator=g) * level * 0.1
    sales = (level + season + noise).clamp_min(0)
    feats = torch.randn(n_series, HIST, N_FEATS, generator=g)
    stores = torch.randint(0, N_STORES, (n_series,), generator=g)
    return sales, feats, stores


class TemporalBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.conv = nn.Conv1d(ch, 2 * ch, kernel_size=3, padding=dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, ch)

    def forward(self, x):
        a, b = self.conv(x).chunk(2, dim=1)
        return x + self.norm(torch.tanh(a) * torch.sigmoid(b))


class Forecaster(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.store_emb = nn.Embedding(N_STORES, 16)
        self.inp = nn.Conv1d(1 + N_FEATS + 16, ch, kernel_size=1)
        self.blocks = nn.ModuleList([TemporalBlock(ch, d) for d in (1, 2, 4, 8, 1, 2, 4, 8)])
        self.head = nn.Sequential(nn.Linear(ch * 2, 128), nn.GELU(), nn.Linear(128, HORIZON * 3))
        self.y_mean = 0.0
        self.y_std = 1.0
        self.quantiles = (0.1, 0.5, 0.9)

    def set_target_stats(self, mean, std):
        self.y_mean = mean
        self.y_std = std

    def forward(self, sales, feats, store):
        y = (sales - self.y_mean) / self.y_std
        emb = self.store_emb(store)[:, None, :].expand(-1, sales.shape[1], -1)
        x = torch.cat([y[..., None], feats, emb], dim=-1).transpose(1, 2)
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        pooled = torch.cat([h.mean(-1), h[..., -1]], dim=-1)
        q = self.head(pooled).view(-1, HORIZON, 3)
        q = torch.cumsum(torch.cat([q[..., :1], F.softplus(q[..., 1:])], dim=-1), dim=-1)
        return F.relu(q * self.y_std + self.y_mean)


def estimate_target_stats(sales, n_sample=1024):
    rng = np.random.default_rng()
    idx = torch.from_numpy(rng.choice(sales.shape[0], size=n_sample, replace=False))
    sample = sales[idx]
    return float(sample.mean()), float(sample.std())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=128)
    args = ap.parse_args()
    torch.set_num_threads(1)

    t_start = time.perf_counter()
    torch.manual_seed(0)
    model = Forecaster().eval()
    sales, feats, stores = load_history()
    mean, std = estimate_target_stats(sales)
    model.set_target_stats(mean, std)
    print(f"target stats: mean={mean:.3f} std={std:.3f}")

    scorer = torch.compile(model)
    bs = args.batch_size
    t0 = time.perf_counter()
    with torch.inference_mode():
        scorer(sales[:bs], feats[:bs], stores[:bs])
    warm = time.perf_counter() - t0
    print(f"warm-up (compile) {warm:.1f}s")

    lat = []
    with torch.inference_mode():
        for b in range(args.batches):
            lo = (b * bs) % (sales.shape[0] - bs)
            t = time.perf_counter()
            out = scorer(sales[lo:lo + bs], feats[lo:lo + bs], stores[lo:lo + bs])
            lat.append(time.perf_counter() - t)
    p50 = sorted(lat)[len(lat) // 2] * 1e3
    print(f"scored {args.batches} batches, p50 {p50:.1f} ms, last P50 forecast mean {out[..., 1].mean():.2f}")
    print(f"ready after {time.perf_counter() - t_start:.1f}s (cache dir {os.environ['TORCHINDUCTOR_CACHE_DIR']})")


if __name__ == "__main__":
    main()
