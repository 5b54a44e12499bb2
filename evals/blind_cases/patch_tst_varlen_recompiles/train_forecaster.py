"""Train a patch-based transformer forecaster with random lookback windows.

Lookback-length augmentation: every batch draws its context length from LOOKBACKS so the
model learns to forecast from short and long histories (same trick as in Chronos/Moirai
style pre-training). Data is synthetic multi-seasonal series so the job runs anywhere.
"""
import argparse
import logging
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("forecast")

LOOKBACKS = [96, 120, 144, 168, 192, 216, 240, 264, 288, 312, 336, 360]


def make_series(n_series, length, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float32)
    period = torch.randint(12, 60, (n_series, 1), generator=g).float()
    amp = torch.rand(n_series, 1, generator=g) * 2 + 0.5
    trend = torch.randn(n_series, 1, generator=g) * 0.002
    noise = 0.2 * torch.randn(n_series, length, generator=g)
    return amp * torch.sin(2 * torch.pi * t / period) + trend * t + noise


class RevIN(nn.Module):
    def forward(self, x):  # (B, C, L)
        self.mu = x.mean(-1, keepdim=True).detach()
        self.sigma = (x.var(-1, keepdim=True, unbiased=False) + 1e-5).sqrt().detach()
        return (x - self.mu) / self.sigma

    def denorm(self, y):
        return y * self.sigma + self.mu


class PatchForecaster(nn.Module):
    def __init__(self, patch_len=16, d_model=64, n_heads=4, n_layers=1, horizon=48, max_patches=64):
        super().__init__()
        self.patch_len = patch_len
        self.revin = RevIN()
        self.embed = nn.Linear(patch_len, d_model)
        self.pos = nn.Parameter(torch.randn(max_patches, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 2 * d_model, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers)
        self.head = nn.Linear(d_model, horizon)

    def patchify(self, x):
        b, c, length = x.shape
        n_patches = int(np.ceil(length / self.patch_len))
        pad = n_patches * self.patch_len - length
        x = F.pad(x, (pad, 0), mode="replicate")  # left-pad so the latest step ends a patch
        return x.reshape(b * c, n_patches, self.patch_len)

    def forward(self, x):  # x: (B, C, L) -> (B, C, horizon)
        b, c, _ = x.shape
        z = self.patchify(self.revin(x))
        h = self.embed(z) + self.pos[: z.size(1)]
        h = self.encoder(h)
        y = self.head(h[:, -1]).view(b, c, -1)
        return self.revin.denorm(y)


def sample_batch(series, batch_size, lookback, horizon):
    n, total = series.shape
    idx = torch.randint(0, n, (batch_size,))
    start = torch.randint(0, total - lookback - horizon, (batch_size,))
    windows = torch.stack([series[i, s : s + lookback + horizon] for i, s in zip(idx.tolist(), start.tolist())])
    return windows[:, None, :lookback], windows[:, None, lookback:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--horizon", type=int, default=48)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--log-every", type=int, default=5)
    ap.add_argument("--lookbacks", type=str, default=",".join(map(str, LOOKBACKS)), help="context lengths to sample from")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)
    random.seed(0)

    lookbacks = [int(v) for v in args.lookbacks.split(",")]
    series = make_series(256, 1024)
    model = PatchForecaster(horizon=args.horizon)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step_fn = torch.compile(model) if args.compile else model

    times = []
    for step in range(args.steps):
        lookback = random.choice(lookbacks)
        x, y = sample_batch(series, args.batch_size, lookback, args.horizon)
        t0 = time.perf_counter()
        loss = F.mse_loss(step_fn(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        times.append(dt)
        if step % args.log_every == 0 or dt > 1.0:
            log.info("step %3d lookback %3d loss %.4f step_time %.2fs", step, lookback, loss.item(), dt)
    tail = sorted(times[len(times) // 2 :])
    log.info("total %.1fs, median step (2nd half) %.1f ms", sum(times), 1e3 * tail[len(tail) // 2])


if __name__ == "__main__":
    main()
