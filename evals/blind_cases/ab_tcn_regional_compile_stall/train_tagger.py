"""Frame-level audio event tagger: residual conv/MLP stack trained on synthetic log-mel clips.

Usage:
    python train_tagger.py --epochs 2 --compile
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("tagger")


class SyntheticClips(Dataset):
    def __init__(self, n_clips, n_frames, n_mels, n_classes, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n_clips, n_frames, n_mels, generator=g)
        proto = torch.randn(n_classes, n_mels, generator=g)
        self.y = (self.x.mean(1) @ proto.T > 0.3).float()

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class ResidualBlock(nn.Module):
    """Pre-norm depthwise-conv + MLP block with depth-scaled residuals."""

    def __init__(self, dim, layer_idx, kernel_size=5, expansion=2, dropout=0.1):
        super().__init__()
        self.layer_idx = layer_idx
        self.norm1 = nn.LayerNorm(dim)
        self.dwconv = nn.Conv1d(dim, dim, kernel_size, padding=kernel_size // 2, groups=dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * expansion)
        self.fc2 = nn.Linear(dim * expansion, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        # residual branches are down-weighted with depth (as in GPT-2 / DeepNet style init)
        scale = 1.0 / math.sqrt(2.0 * (self.layer_idx + 1))
        h = self.norm1(x).transpose(1, 2)
        x = x + scale * self.dwconv(h).transpose(1, 2)
        h = self.fc2(self.drop(F.gelu(self.fc1(self.norm2(x)))))
        return x + scale * h


class Tagger(nn.Module):
    def __init__(self, n_mels, dim, depth, n_classes):
        super().__init__()
        self.inp = nn.Linear(n_mels, dim)
        self.blocks = nn.ModuleList([ResidualBlock(dim, i) for i in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        x = self.inp(x)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(1))


def evaluate(model, loader):
    model.eval()
    tot, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            tot += F.binary_cross_entropy_with_logits(logits, y, reduction="sum").item()
            correct += ((logits > 0).float() == y).sum().item()
            n += y.numel()
    model.train()
    return tot / n, correct / n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--depth", type=int, default=12)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--clips", type=int, default=256)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    n_mels, n_frames, n_classes = 40, 100, 10
    train_ds = SyntheticClips(args.clips, n_frames, n_mels, n_classes, seed=args.seed)
    val_ds = SyntheticClips(64, n_frames, n_mels, n_classes, seed=args.seed + 1)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=32)

    model = Tagger(n_mels, args.dim, args.depth, n_classes)
    if args.compile:
        # regional compilation: compile the repeated block once instead of the whole model
        for blk in model.blocks:
            blk.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, total_steps=args.epochs * len(train_dl))

    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        step_times = []
        for step, (x, y) in enumerate(train_dl):
            ts = time.perf_counter()
            loss = F.binary_cross_entropy_with_logits(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step_times.append(time.perf_counter() - ts)
            if step % 8 == 0:
                log.info("epoch %d step %d loss %.4f lr %.2e step_time %.3fs",
                         epoch, step, loss.item(), sched.get_last_lr()[0], step_times[-1])
        val_loss, val_acc = evaluate(model, val_dl)
        steady = sorted(step_times[len(step_times) // 2:])
        log.info("epoch %d done in %.1fs | median step (2nd half) %.1f ms | val loss %.4f acc %.3f",
                 epoch, time.perf_counter() - t0, 1e3 * steady[len(steady) // 2], val_loss, val_acc)


if __name__ == "__main__":
    main()
