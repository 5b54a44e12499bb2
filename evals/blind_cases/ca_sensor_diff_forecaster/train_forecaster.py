"""Train a small next-step forecaster for pump-vibration sensor windows.

usage: python train_forecaster.py [--compile] [--epochs N] [--seed S]
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

import tsops  # noqa: F401  (registers torch.ops.tsops.*)

log = logging.getLogger("forecaster")


def make_sensor_data(n_series: int, length: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float32)
    period = 24.0
    phase = torch.rand(n_series, 1, generator=g) * 2 * math.pi
    amp = 1.0 + torch.rand(n_series, 1, generator=g)
    trend = (torch.rand(n_series, 1, generator=g) - 0.5) * 0.05
    level = torch.randn(n_series, 1, generator=g) * 5.0
    noise = torch.randn(n_series, length, generator=g) * 0.1
    return level + trend * t + amp * torch.sin(2 * math.pi * t / period + phase) + noise


def make_windows(series: torch.Tensor, window: int):
    xs, ys = [], []
    for start in range(0, series.shape[1] - window - 1, 4):
        xs.append(series[:, start:start + window])
        ys.append(series[:, start + window])
    return torch.cat(xs), torch.cat(ys)


class DiffForecaster(nn.Module):
    """Differencing front end + MLP on the differenced window; predicts the next delta."""

    def __init__(self, window: int, lag: int = 1, coef: float = 1.0, hidden: int = 128):
        super().__init__()
        self.lag = lag
        self.coef = coef
        self.net = nn.Sequential(
            nn.Linear(window, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, window: torch.Tensor) -> torch.Tensor:
        last = window[:, -1:]
        x = window - last                      # anchor at the last observation
        raw = x.clone()
        torch.ops.tsops.seasonal_difference_(raw, x, self.lag, self.coef)
        delta = self.net(x).squeeze(-1)
        return last.squeeze(-1) + delta


def evaluate(model, loader):
    model.eval()
    abs_err, n = 0.0, 0
    with torch.no_grad():
        for xb, yb in loader:
            pred = model(xb)
            abs_err += (pred - yb).abs().sum().item()
            n += yb.numel()
    model.train()
    return abs_err / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--backend", default="inductor")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--window", type=int, default=48)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=10)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    series = make_sensor_data(n_series=32, length=400, seed=args.seed)
    split = 300
    xtr, ytr = make_windows(series[:, :split], args.window)
    xva, yva = make_windows(series[:, split - args.window - 1:], args.window)
    train_loader = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True,
                              drop_last=True, generator=torch.Generator().manual_seed(args.seed))
    val_loader = DataLoader(TensorDataset(xva, yva), batch_size=256)
    log.info("train windows=%d val windows=%d", len(xtr), len(xva))

    model = DiffForecaster(args.window)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step_model = torch.compile(model, backend=args.backend) if args.compile else model
    if args.compile:
        probe = xva[:256]
        with torch.no_grad():
            d_eval = (model(probe) - step_model(probe)).abs().max().item()
        d_train = (model(probe) - step_model(probe)).abs().max().item()
        log.info("parity check (eager vs compiled forward): max|diff| no_grad=%.3g  grad-enabled=%.3g",
                 d_eval, d_train)
    naive_mae = (xva[:, -1] - yva).abs().mean().item()
    log.info("persistence baseline val MAE %.4f", naive_mae)

    step = 0
    for epoch in range(args.epochs):
        t0 = time.time()
        total, nb = 0.0, 0
        for xb, yb in train_loader:
            pred = step_model(xb)
            loss = nn.functional.smooth_l1_loss(pred, yb, beta=0.5)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item()
            nb += 1
            if step % args.log_every == 0:
                log.info("step %d loss %.5f", step, loss.item())
            step += 1
        val_mae = evaluate(step_model, val_loader)
        log.info("epoch %d train_loss %.4f val_MAE %.4f (%.1fs)", epoch, total / nb, val_mae, time.time() - t0)

    print(f"final val MAE: {val_mae:.4f} (persistence baseline {naive_mae:.4f}) compile={args.compile}")


if __name__ == "__main__":
    main()
