"""Human-activity recognition (6-axis IMU windows) - small 1D-CNN trainer.

GPU-side augmentation + forward are fused in one compiled step so the whole
thing runs as a single graph (we use fullgraph=True to make sure nothing falls
back to Python in the hot loop).
"""
import argparse
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("har")

N_CLASSES = 6
N_CHANNELS = 6  # acc xyz + gyro xyz


def make_synthetic_split(n, win, seed):
    """Stand-in for the preprocessed UCI-HAR windows (n, channels, win)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    t = torch.linspace(0, 1, win)
    freq = (y.float() + 1.0).view(-1, 1, 1) * 2.0
    base = torch.sin(2 * torch.pi * freq * t.view(1, 1, -1))
    x = base.repeat(1, N_CHANNELS, 1) + 0.3 * torch.randn(n, N_CHANNELS, win, generator=g)
    return x, y


class IMUAugment:
    """Per-window augmentation: random gain, random sensor jitter, random time shift."""

    def __init__(self, gain=(0.8, 1.2), jitter_std=0.05, max_shift=8, seed=0):
        self.gain = gain
        self.jitter_std = jitter_std
        self.max_shift = max_shift
        # one reproducible stream per run (NumPy's recommended Generator API)
        self.rng = np.random.default_rng(seed)

    def __call__(self, x):
        b = x.shape[0]
        gains = self.rng.uniform(self.gain[0], self.gain[1], size=(b, 1, 1))
        x = x * torch.from_numpy(gains).to(x.dtype)
        noise = self.rng.normal(0.0, self.jitter_std, size=tuple(x.shape))
        x = x + torch.from_numpy(noise).to(x.dtype)
        shift = int(self.rng.integers(-self.max_shift, self.max_shift + 1))
        return torch.roll(x, shifts=shift, dims=-1)


class HARNet(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.conv1 = nn.Conv1d(N_CHANNELS, width, 5, padding=2)
        self.bn1 = nn.BatchNorm1d(width)
        self.conv2 = nn.Conv1d(width, width * 2, 5, padding=2)
        self.bn2 = nn.BatchNorm1d(width * 2)
        self.head = nn.Linear(width * 2, N_CLASSES)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool1d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = x.mean(dim=-1)
        return self.head(x)


def build_step(model, augment, compile_step):
    def step(x, y):
        x = augment(x)
        logits = model(x)
        return F.cross_entropy(logits, y)

    if compile_step:
        return torch.compile(step, fullgraph=True)
    return step


@torch.no_grad()
def evaluate(model, x, y, bs):
    model.eval()
    correct = 0
    for i in range(0, len(x), bs):
        correct += (model(x[i:i + bs]).argmax(-1) == y[i:i + bs]).sum().item()
    model.train()
    return correct / len(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--win", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    xtr, ytr = make_synthetic_split(1024, args.win, args.seed)
    xva, yva = make_synthetic_split(256, args.win, args.seed + 1)

    model = HARNet()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    augment = IMUAugment(seed=args.seed)
    step = build_step(model, augment, compile_step=not args.no_compile)
    log.info("torch %s, compile=%s", torch.__version__, not args.no_compile)

    gstep = 0
    for epoch in range(args.epochs):
        perm = torch.randperm(len(xtr))
        t0 = time.perf_counter()
        for i in range(0, len(xtr) - args.batch_size + 1, args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss = step(xtr[idx], ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if gstep % 5 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, gstep, loss.item())
            gstep += 1
        acc = evaluate(model, xva, yva, args.batch_size)
        log.info("epoch %d done in %.1fs  val_acc %.3f", epoch, time.perf_counter() - t0, acc)


if __name__ == "__main__":
    main()
