"""Keyword-spotting toy trainer: synthetic 1 s clips, 10 keywords, small CNN.

    python train_kws.py --workers 2 --epochs 2
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from features import fast_log_mel

log = logging.getLogger("kws")


class SyntheticKeywords(Dataset):
    """Each keyword is a chirp with its own frequency band, plus noise."""

    def __init__(self, n, n_classes=10, sr=16000, seed=0, featurizer=fast_log_mel):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, n_classes, (n,), generator=g)
        self.phase = torch.rand(n, generator=g) * 2 * math.pi
        self.noise_seed = torch.randint(0, 2**31 - 1, (n,), generator=g)
        self.sr = sr
        self.featurizer = featurizer

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        y = int(self.labels[i])
        t = torch.arange(self.sr) / self.sr
        f0 = 300.0 + 250.0 * y
        wave = torch.sin(2 * math.pi * (f0 + 400.0 * t) * t + self.phase[i])
        g = torch.Generator().manual_seed(int(self.noise_seed[i]))
        wave = wave + 0.3 * torch.randn(self.sr, generator=g)
        return self.featurizer(wave), y


class KWSNet(nn.Module):
    def __init__(self, n_mels=40, n_classes=10):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(n_mels, 64, 5, padding=2), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 64, 5, padding=2, stride=2), nn.BatchNorm1d(64), nn.ReLU(),
            nn.Conv1d(64, 96, 3, padding=1, stride=2), nn.BatchNorm1d(96), nn.ReLU(),
        )
        self.head = nn.Linear(96, n_classes)

    def forward(self, x):
        return self.head(self.body(x).mean(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--train-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.manual_seed(0)

    train_ds = SyntheticKeywords(args.train_size, seed=1)
    val_ds = SyntheticKeywords(256, seed=2)
    # spawn: forked workers deadlocked with the OpenMP pool on our cluster nodes
    loader_kw = dict(num_workers=args.workers, persistent_workers=args.workers > 0,
                     multiprocessing_context="spawn" if args.workers > 0 else None)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, **loader_kw)
    val_dl = DataLoader(val_ds, batch_size=64, **loader_kw)

    model = KWSNet()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        t0, seen, tot = time.time(), 0, 0.0
        for x, y in train_dl:
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item() * len(y)
            seen += len(y)
        model.eval()
        correct = n = 0
        with torch.no_grad():
            for x, y in val_dl:
                correct += (model(x).argmax(-1) == y).sum().item()
                n += len(y)
        log.info("epoch %d train_loss %.4f val_acc %.4f (%.1fs)", epoch, tot / seen, correct / n, time.time() - t0)


if __name__ == "__main__":
    main()
