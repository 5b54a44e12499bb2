"""Train the residual-MLP load forecaster (TiDE-style encoder/decoder) on the
hourly feeder-load windows.

Input scaling and numerical sanity checks live inside the model so the module we
serve behaves exactly like the one we train.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("forecaster")


def check_finite(x: torch.Tensor, where: str) -> torch.Tensor:
    if not torch.isfinite(x).all():
        raise FloatingPointError(f"non-finite activations after {where}")
    return x


class InputScaler(nn.Module):
    """Standardise lookback windows with the training-set statistics."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)

    def forward(self, x):
        if (self.std == 0).any():
            raise ValueError("std evaluated to zero, leading to division by zero.")
        return (x - self.mean) / self.std

    def inverse(self, y):
        return y * self.std[..., :1] + self.mean[..., :1]


class ResidualBlock(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(d_in)
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)
        self.skip = nn.Linear(d_in, d_out) if d_in != d_out else nn.Identity()
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        y = self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))
        return check_finite(self.skip(x) + y, "ResidualBlock")


class Forecaster(nn.Module):
    def __init__(self, lookback, horizon, n_cov, mean, std, d_model=64, n_enc=4, n_dec=3, dropout=0.1):
        super().__init__()
        self.horizon = horizon
        self.scaler = InputScaler(mean, std)
        self.cov_proj = ResidualBlock(n_cov, d_model, 8, dropout)
        d_in = lookback + (lookback + horizon) * 8
        self.encoder = nn.ModuleList([ResidualBlock(d_in, d_model, d_model, dropout)] +
                                     [ResidualBlock(d_model, d_model, d_model, dropout) for _ in range(n_enc - 1)])
        self.decoder = nn.ModuleList([ResidualBlock(d_model, d_model, d_model, dropout) for _ in range(n_dec - 1)] +
                                     [ResidualBlock(d_model, d_model, horizon, dropout)])
        self.lookback_skip = nn.Linear(lookback, horizon)

    def forward(self, past, covariates):
        # past: [B, L, 1] load, covariates: [B, L+H, n_cov] calendar/weather features
        z = self.scaler(past).squeeze(-1)
        cov = self.cov_proj(covariates).flatten(1)
        h = torch.cat([z, cov], dim=1)
        for blk in self.encoder:
            h = blk(h)
        for blk in self.decoder:
            h = blk(h)
        return h + self.lookback_skip(z)


def make_windows(n_batches, batch_size, lookback, horizon, n_cov, gen):
    for _ in range(n_batches):
        t0 = torch.randint(0, 24 * 365, (batch_size, 1), generator=gen).float()
        t = t0 + torch.arange(lookback + horizon).float()
        daily = torch.sin(2 * math.pi * t / 24)
        weekly = torch.sin(2 * math.pi * t / (24 * 7))
        load = 50 + 20 * daily + 8 * weekly + 3 * torch.randn(t.shape, generator=gen)
        cov = torch.stack([daily, torch.cos(2 * math.pi * t / 24), weekly,
                           torch.cos(2 * math.pi * t / (24 * 7))] +
                          [torch.randn(t.shape, generator=gen) * 0.1 for _ in range(n_cov - 4)], dim=-1)
        yield load[:, :lookback, None], cov, load[:, lookback:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup-steps", type=int, default=50, help="steps excluded from the throughput number")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lookback", type=int, default=48)
    p.add_argument("--horizon", type=int, default=12)
    p.add_argument("--n-cov", type=int, default=6)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = Forecaster(args.lookback, args.horizon, args.n_cov,
                       mean=torch.tensor([[[50.0]]]), std=torch.tensor([[[15.0]]]))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    def train_step(past, cov, target):
        pred = model(past, cov)
        loss = F.smooth_l1_loss(pred, model.scaler(target.unsqueeze(-1)).squeeze(-1))
        loss.backward()
        return loss

    step_fn = torch.compile(train_step) if args.compile else train_step

    model.train()
    t_measured, n_measured, running = 0.0, 0, 0.0
    t_start = time.perf_counter()
    for step, (past, cov, target) in enumerate(
            make_windows(args.steps, args.batch_size, args.lookback, args.horizon, args.n_cov, gen), start=1):
        t0 = time.perf_counter()
        loss = step_fn(past, cov, target)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        if step > args.warmup_steps:
            t_measured += dt
            n_measured += 1
        running = 0.9 * running + 0.1 * loss.item() if step > 1 else loss.item()
        if step % 50 == 0:
            log.info("step %d loss %.4f (ema %.4f) step_time %.2fms", step, loss.item(), running, dt * 1e3)
    log.info("%s: %.2f ms/step after warmup, total wall %.1fs",
             "compiled" if args.compile else "eager", 1e3 * t_measured / n_measured, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
