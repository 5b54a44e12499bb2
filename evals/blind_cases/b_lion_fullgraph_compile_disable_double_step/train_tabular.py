"""Tabular regression (house-price style) trained with Lion.

python train_tabular.py [--steps N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from lion import Lion

N_FEATURES = 24


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, N_FEATURES, generator=g)
    w = torch.linspace(-1.0, 1.0, N_FEATURES)
    y = torch.sin(x @ w) + 0.5 * (x[:, :4] ** 2).sum(1) / 4 + 0.1 * torch.randn(n, generator=g)
    return x, y.unsqueeze(1)


class ResidualMLP(nn.Module):
    def __init__(self, d_in, width=128, depth=3, p_drop=0.0):
        super().__init__()
        self.inp = nn.Linear(d_in, width)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(width), nn.Linear(width, width * 2), nn.GELU(),
                          nn.Dropout(p_drop), nn.Linear(width * 2, width))
            for _ in range(depth)
        )
        self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 1))

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = h + blk(h)
        return self.head(h)


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    return F.mse_loss(model(x), y).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()

    torch.manual_seed(0)
    x_tr, y_tr = make_data(20000, seed=1)
    x_va, y_va = make_data(4000, seed=2)

    model = ResidualMLP(N_FEATURES)
    cmodel = torch.compile(model)
    opt = Lion(model.parameters(), lr=args.lr, weight_decay=0.1)
    warmup = max(1, args.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * s / args.steps)))

    g = torch.Generator().manual_seed(3)
    t0 = time.time()
    for step in range(1, args.steps + 1):
        model.train()
        idx = torch.randint(0, x_tr.shape[0], (args.batch,), generator=g)
        loss = F.mse_loss(cmodel(x_tr[idx]), y_tr[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0:
            print(f"step {step:4d}  train_mse {loss.item():.4f}  "
                  f"val_mse {evaluate(model, x_va, y_va):.4f}", flush=True)

    print(f"done in {time.time() - t0:.1f}s  final val_mse={evaluate(model, x_va, y_va):.4f}", flush=True)


if __name__ == "__main__":
    main()
