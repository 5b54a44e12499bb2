"""Fine-tune the tabular MLP head on a synthetic regression set (CPU)."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from fused_ops import bias_gelu

log = logging.getLogger("train")


class FusedMLPBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden, bias=False)
        self.bias1 = nn.Parameter(torch.zeros(hidden))
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(bias_gelu(self.fc1(self.norm(x)), self.bias1))


class TabularRegressor(nn.Module):
    def __init__(self, n_features=32, dim=128, depth=3):
        super().__init__()
        self.inp = nn.Linear(n_features, dim)
        self.blocks = nn.Sequential(*[FusedMLPBlock(dim, 4 * dim) for _ in range(depth)])
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))).squeeze(-1)


def make_data(n, n_features, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n_features, generator=g)
    w = torch.randn(n_features, generator=g)
    y = torch.tanh(x @ w / n_features ** 0.5) + 0.05 * torch.randn(n, generator=g)
    return x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--eval-only", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    x, y = make_data(2048, 32, seed=0)
    xv, yv = make_data(512, 32, seed=1)
    model = TabularRegressor()
    fwd = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    with torch.no_grad():
        log.info("initial val mse %.4f", F.mse_loss(fwd(xv), yv).item())
    if args.eval_only:
        return

    for epoch in range(args.epochs):
        t0, total = time.perf_counter(), 0.0
        perm = torch.randperm(x.shape[0])
        for i in range(0, x.shape[0], args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss = F.mse_loss(fwd(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * idx.numel()
        with torch.no_grad():
            val = F.mse_loss(fwd(xv), yv).item()
        log.info("epoch %d train mse %.4f val mse %.4f (%.1fs)", epoch, total / x.shape[0], val, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
