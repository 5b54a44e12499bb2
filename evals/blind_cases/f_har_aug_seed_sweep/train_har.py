"""Human-activity recognition (6-axis IMU windows) - augmentation seed sweep.

We keep the model initialisation fixed (INIT_SEED) and vary only the
augmentation seed, to measure how much of the run-to-run spread comes
from the augmentation pipeline.

    python train_har.py                # eager
    python train_har.py --compile      # torch.compile'd train step
"""
import argparse
import math
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

INIT_SEED = 1234
DATA_SEED = 7
N_CLASSES = 6
CHANNELS = 6
WINDOW = 128


# ----------------------------------------------------------------------------
# synthetic IMU data (stands in for the UCI-HAR windows we use in the real job)
# ----------------------------------------------------------------------------
def make_split(n, gen):
    labels = torch.randint(0, N_CLASSES, (n,), generator=gen)
    t = torch.linspace(0, 4 * math.pi, WINDOW)
    freqs = 0.5 + labels.float()[:, None, None] * 0.35
    phase = torch.rand(n, CHANNELS, 1, generator=gen) * 2 * math.pi
    amp = 0.5 + 0.1 * torch.arange(CHANNELS).float()[None, :, None]
    x = amp * torch.sin(freqs * t[None, None, :] + phase)
    x = x + 0.35 * torch.randn(n, CHANNELS, WINDOW, generator=gen)
    return x.float(), labels


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=dilation * (k // 2), dilation=dilation)
        self.norm = nn.BatchNorm1d(cout)

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x)))


class HARNet(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.stem = ConvBlock(CHANNELS, width, 7)
        self.blocks = nn.Sequential(
            ConvBlock(width, width, 5, dilation=1),
            ConvBlock(width, width, 5, dilation=2),
            ConvBlock(width, width, 5, dilation=4),
        )
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.GELU(), nn.Linear(width, N_CLASSES))

    def forward(self, x):
        h = self.stem(x)
        h = h + self.blocks(h)
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=-1)
        return self.head(pooled)


# ----------------------------------------------------------------------------
# augmentation (jitter / per-channel scaling / time masking)
# ----------------------------------------------------------------------------
def augment(x, jitter_std=0.08, scale_range=0.2, mask_frac=0.1):
    b, c, t = x.shape
    jitter = np.random.normal(0.0, jitter_std, size=(b, c, t)).astype(np.float32)
    scale = np.random.uniform(1.0 - scale_range, 1.0 + scale_range, size=(b, c, 1)).astype(np.float32)
    start = np.random.rand(b, 1, 1) * (1.0 - mask_frac)
    pos = np.arange(t, dtype=np.float64)[None, None, :] / t
    keep = ~((pos >= start) & (pos < start + mask_frac))
    x = x * torch.from_numpy(scale) + torch.from_numpy(jitter)
    return x * torch.from_numpy(keep.astype(np.float32))


def train_step(model, opt, x, y):
    model.train()
    xa = augment(x)
    logits = model(xa)
    loss = F.cross_entropy(logits, y, label_smoothing=0.05)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


@torch.no_grad()
def evaluate(model, x, y, bs=256):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    for i in range(0, x.size(0), bs):
        logits = model(x[i:i + bs])
        loss_sum += F.cross_entropy(logits, y[i:i + bs], reduction="sum").item()
        correct += (logits.argmax(-1) == y[i:i + bs]).sum().item()
        total += y[i:i + bs].numel()
    return loss_sum / total, correct / total


def run_one(aug_seed, args, data):
    (xtr, ytr), (xva, yva) = data
    np.random.seed(aug_seed)           # augmentation stream
    torch.manual_seed(INIT_SEED)       # identical init for every run in the sweep
    model = HARNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    step_fn = torch.compile(train_step) if args.compile else train_step

    order_gen = torch.Generator().manual_seed(DATA_SEED)
    losses = []
    for epoch in range(args.epochs):
        perm = torch.randperm(xtr.size(0), generator=order_gen)
        for i in range(0, xtr.size(0) - args.bs + 1, args.bs):
            idx = perm[i:i + args.bs]
            losses.append(step_fn(model, opt, xtr[idx], ytr[idx]).item())
    val_loss, val_acc = evaluate(model, xva, yva)
    return losses[-1], val_loss, val_acc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--bs", type=int, default=64)
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    args = p.parse_args()

    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(DATA_SEED)
    data = (make_split(1024, gen), make_split(512, gen))

    mode = "compiled" if args.compile else "eager"
    results = []
    for s in args.seeds:
        t0 = time.time()
        last, vl, va = run_one(s, args, data)
        results.append((last, vl, va))
        print(f"[{mode}] aug_seed={s}  last_train_loss={last:.6f}  val_loss={vl:.6f}  "
              f"val_acc={va:.4f}  ({time.time() - t0:.1f}s)")

    vls = [r[1] for r in results]
    vas = [r[2] for r in results]
    print(f"[{mode}] val_loss mean={statistics.mean(vls):.6f} std={statistics.pstdev(vls):.6f}")
    print(f"[{mode}] val_acc  mean={statistics.mean(vas):.4f} std={statistics.pstdev(vas):.4f}")


if __name__ == "__main__":
    main()
