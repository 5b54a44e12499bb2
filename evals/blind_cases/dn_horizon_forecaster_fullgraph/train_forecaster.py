"""Multi-horizon demand forecaster: training script.

Trains a small dilated temporal-conv forecaster on synthetic store/day
demand series and reports weighted multi-horizon MAE on a held-out split.

    python train_forecaster.py --epochs 1 --compile
"""
import argparse
import logging
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("forecaster")


def make_series(n_series, length, n_cov, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float32)
    level = torch.rand(n_series, 1, generator=g) * 50 + 10
    weekly = torch.sin(2 * torch.pi * t / 7)[None] * (torch.rand(n_series, 1, generator=g) * 8)
    trend = t[None] * (torch.randn(n_series, 1, generator=g) * 0.02)
    noise = torch.randn(n_series, length, generator=g) * 2.0
    y = (level + weekly + trend + noise).clamp_min(0.0)
    cov = torch.randn(n_series, length, n_cov, generator=g)
    cov[..., 0] = torch.sin(2 * torch.pi * t / 7)[None]
    cov[..., 1] = torch.cos(2 * torch.pi * t / 7)[None]
    return y, cov


class WindowDataset(torch.utils.data.Dataset):
    def __init__(self, y, cov, context, horizons):
        self.y, self.cov = y, cov
        self.context = context
        self.max_h = max(horizons)
        self.horizons = horizons
        self.starts = [
            (s, i)
            for s in range(y.shape[0])
            for i in range(0, y.shape[1] - context - self.max_h, 3)
        ]

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, idx):
        s, i = self.starts[idx]
        hist = self.y[s, i : i + self.context]
        cov = self.cov[s, i : i + self.context]
        end = i + self.context
        target = torch.stack([self.y[s, end + h - 1] for h in self.horizons])
        scale = hist.abs().mean().clamp_min(1.0)
        return hist / scale, cov, target / scale, scale


class TemporalBlock(nn.Module):
    def __init__(self, ch, dilation, dropout):
        super().__init__()
        self.conv1 = nn.Conv1d(ch, ch, 3, padding=dilation, dilation=dilation)
        self.conv2 = nn.Conv1d(ch, ch, 3, padding=dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, ch)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = F.gelu(self.conv1(x))
        h = self.drop(self.conv2(h))
        return self.norm(x + h)


class HorizonForecaster(nn.Module):
    def __init__(self, n_cov, context, horizons, horizon_weights, width=64, depth=4, dropout=0.1):
        super().__init__()
        self.horizons = list(horizons)
        self.horizon_weights = list(horizon_weights)
        self.inp = nn.Conv1d(1 + n_cov, width, 1)
        self.blocks = nn.ModuleList(
            [TemporalBlock(width, 2 ** i, dropout) for i in range(depth)]
        )
        self.head = nn.Sequential(
            nn.Linear(width * 2, width * 2),
            nn.GELU(),
            nn.Linear(width * 2, len(self.horizons) * 2),
        )

    def forward(self, hist, cov):
        x = torch.cat([hist.unsqueeze(-1), cov], dim=-1).transpose(1, 2)
        x = self.inp(x)
        for blk in self.blocks:
            x = blk(x)
        pooled = torch.cat([x.mean(-1), x[..., -1]], dim=-1)
        out = self.head(pooled).view(-1, len(self.horizons), 2)
        mu = out[..., 0]
        log_sigma = out[..., 1].clamp(-5.0, 3.0)
        return mu, log_sigma

    def horizon_loss(self, mu, log_sigma, target):
        w = torch.tensor(self.horizon_weights, dtype=mu.dtype, device=mu.device)
        w = w / statistics.mean(self.horizon_weights)
        nll = 0.5 * ((target - mu) / log_sigma.exp()) ** 2 + log_sigma
        per_h = nll.mean(0)
        return (per_h * w).mean(), (target - mu).abs().mean(0)


def train_step_fn(model, hist, cov, target):
    mu, log_sigma = model(hist, cov)
    loss, mae = model.horizon_loss(mu, log_sigma, target)
    return loss, mae


def evaluate(model, loader):
    model.eval()
    tot, n = None, 0
    with torch.no_grad():
        for hist, cov, target, scale in loader:
            mu, _ = model(hist, cov)
            err = ((mu - target).abs() * scale[:, None]).sum(0)
            tot = err if tot is None else tot + err
            n += hist.shape[0]
    model.train()
    return tot / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--context", type=int, default=56)
    p.add_argument("--series", type=int, default=48)
    p.add_argument("--length", type=int, default=240)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    horizons = [1, 2, 3, 7, 14]
    horizon_weights = [3.0, 2.0, 1.5, 1.0, 0.5]
    n_cov = 6
    y, cov = make_series(args.series, args.length, n_cov, args.seed)
    split = int(args.length * 0.8)
    train_ds = WindowDataset(y[:, :split], cov[:, :split], args.context, horizons)
    val_ds = WindowDataset(y[:, split - args.context - max(horizons):], cov[:, split - args.context - max(horizons):], args.context, horizons)
    train_loader = torch.utils.data.DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_loader = torch.utils.data.DataLoader(val_ds, batch_size=256)
    log.info("train windows=%d val windows=%d", len(train_ds), len(val_ds))

    model = HorizonForecaster(n_cov, args.context, horizons, horizon_weights, dropout=args.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    step_fn = train_step_fn
    if args.compile:
        step_fn = torch.compile(train_step_fn, fullgraph=True)
        log.info("compiled train step with fullgraph=True")

    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        running = 0.0
        for i, (hist, c, target, _) in enumerate(train_loader):
            loss, mae = step_fn(model, hist, c, target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            running += loss.item()
            if i == 0 and epoch == 0:
                log.info("first step done in %.1fs", time.perf_counter() - t0)
        val_mae = evaluate(model, val_loader)
        log.info(
            "epoch %d loss %.4f val MAE per horizon %s (%.1fs)",
            epoch, running / (i + 1),
            " ".join(f"h{h}={v:.2f}" for h, v in zip(horizons, val_mae.tolist())),
            time.perf_counter() - t0,
        )


if __name__ == "__main__":
    main()
