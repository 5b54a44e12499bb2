"""Deep-kernel GP regression for sensor drift calibration.

Feature extractor (MLP) + RBF kernel on the learned features, trained by
maximising the exact GP marginal likelihood. Runs as a nightly job that is
restarted many times a day on the same box (shared Inductor cache dir).
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("dkl")


def make_data(n, d, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    w = torch.randn(d, 1, generator=g, dtype=torch.float64)
    y = torch.sin(x @ w) + 0.3 * torch.cos(2.0 * x[:, :1]) + 0.05 * torch.randn(n, 1, generator=g, dtype=torch.float64)
    return x, y


class ResBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, h):
        return h + self.fc2(F.silu(self.fc1(self.norm(h))))


class FeatureNet(nn.Module):
    def __init__(self, d_in, hidden, d_out, depth=6):
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.blocks = nn.ModuleList([ResBlock(hidden) for _ in range(depth)])
        self.out_norm = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, d_out)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.out(self.out_norm(h))


class DeepKernelGP(nn.Module):
    def __init__(self, d_in, hidden=128, d_feat=16):
        super().__init__()
        self.features = FeatureNet(d_in, hidden, d_feat)
        self.log_lengthscale = nn.Parameter(torch.zeros(()))
        self.log_outputscale = nn.Parameter(torch.zeros(()))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def kernel(self, a, b):
        a = a / self.log_lengthscale.exp()
        b = b / self.log_lengthscale.exp()
        d2 = (a * a).sum(-1, keepdim=True) - 2.0 * a @ b.T + (b * b).sum(-1).unsqueeze(0)
        return self.log_outputscale.exp() * torch.exp(-0.5 * d2.clamp_min(0.0))

    def forward(self, x, y):
        return self.neg_mll(x, y)

    def neg_mll(self, x, y):
        z = self.features(x)
        n = z.shape[0]
        K = self.kernel(z, z) + (self.log_noise.exp() + 1e-4) * torch.eye(n, dtype=z.dtype)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y, L)
        fit = 0.5 * (y * alpha).sum()
        logdet = L.diagonal().log().sum()
        return (fit + logdet + 0.5 * n * math.log(2 * math.pi)) / n


def train_step(loss_fn, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(x, y)
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--dim", type=int, default=8)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    x, y = make_data(args.n, args.dim, seed=1)
    model = DeepKernelGP(args.dim).double()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = model if args.no_compile else torch.compile(model)
    log.info("torch %s, cache dir %s", torch.__version__, os.environ.get("TORCHINDUCTOR_CACHE_DIR", "<default>"))

    t0 = time.perf_counter()
    loss = train_step(loss_fn, opt, x, y)
    first = time.perf_counter() - t0
    log.info("step 0 loss %.4f (first step incl. compile: %.1fs)", loss.item(), first)

    t0 = time.perf_counter()
    for step in range(1, args.steps):
        loss = train_step(loss_fn, opt, x, y)
        if step % 10 == 0:
            log.info("step %d loss %.4f", step, loss.item())
    rest = time.perf_counter() - t0
    log.info("done: first step %.1fs, remaining %d steps %.2fs, final loss %.4f",
             first, args.steps - 1, rest, loss.item())


if __name__ == "__main__":
    main()
