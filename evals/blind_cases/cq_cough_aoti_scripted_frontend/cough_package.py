"""Train a small cough-event classifier on log-mel frames and package it with
AOTInductor for the new CPU inference service (replacing the TorchScript server)."""
import argparse
import logging
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

from features import build_frontend, fit_normalizer

log = logging.getLogger("cough_package")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k=5, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=dilation * (k // 2), dilation=dilation)
        self.norm = nn.BatchNorm1d(cout)

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


class CoughNet(nn.Module):
    def __init__(self, n_mels=40, width=64, n_classes=3):
        super().__init__()
        self.frontend = build_frontend(n_mels)
        self.blocks = nn.Sequential(
            ConvBlock(n_mels, width),
            ConvBlock(width, width, dilation=2),
            ConvBlock(width, width, dilation=4),
        )
        self.attn = nn.Conv1d(width, 1, 1)
        self.head = nn.Linear(width, n_classes)

    def forward(self, logmel):
        h = self.blocks(self.frontend(logmel))
        w = torch.softmax(self.attn(h), dim=-1)          # attentive pooling over frames
        pooled = (h * w).sum(dim=-1)
        return self.head(pooled)


def synthetic_batch(g, batch, n_mels, frames):
    """Log-mel-like clips: background noise plus a burst for the 'cough' class."""
    y = torch.randint(0, 3, (batch,), generator=g)
    x = -60.0 + 8.0 * torch.randn(batch, n_mels, frames, generator=g)
    for i in range(batch):
        if y[i] > 0:
            t0 = int(torch.randint(0, frames - 20, (1,), generator=g))
            lo = 0 if y[i] == 1 else n_mels // 2
            x[i, lo:lo + n_mels // 2, t0:t0 + 20] += 35.0
    return x, y


def train(model, args):
    g = torch.Generator().manual_seed(args.seed)
    fit_x, _ = synthetic_batch(g, 64, args.n_mels, args.frames)
    fit_normalizer(model.frontend, fit_x)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model.train()
    for step in range(args.steps):
        x, y = synthetic_batch(g, args.batch, args.n_mels, args.frames)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %3d  loss %.4f", step, loss.item())
    model.eval()
    return g


def package(model, args, g):
    example, _ = synthetic_batch(g, 4, args.n_mels, args.frames)
    batch = Dim("batch", min=1, max=64)
    frames = Dim("frames", min=32, max=2000)
    t0 = time.perf_counter()
    ep = torch.export.export(model, (example,), dynamic_shapes={"logmel": {0: batch, 2: frames}})
    log.info("exported in %.1fs", time.perf_counter() - t0)
    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    log.info("AOTInductor package written to %s in %.1fs", path, time.perf_counter() - t0)
    return path


def smoke_test(model, path, args, g):
    runner = torch._inductor.aoti_load_package(path)
    worst = 0.0
    with torch.no_grad():
        for b, t in [(1, 150), (8, 300), (3, 777)]:
            x, _ = synthetic_batch(g, b, args.n_mels, t)
            diff = (runner(x) - model(x)).abs().max().item()
            worst = max(worst, diff)
            log.info("smoke batch=%d frames=%d max|diff|=%.2e", b, t, diff)
    if worst > 1e-4:
        raise SystemExit(f"package output differs from eager: {worst:.3e}")
    log.info("package OK")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--n-mels", type=int, default=40)
    p.add_argument("--frames", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="cough_cpu.pt2")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(args.seed)
    log.info("torch %s", torch.__version__)

    model = CoughNet(args.n_mels)
    g = train(model, args)
    path = package(model, args, g)
    smoke_test(model, os.fspath(path), args, g)


if __name__ == "__main__":
    main()
