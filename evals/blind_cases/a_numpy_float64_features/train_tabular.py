"""Churn model on tabular features: standardize with numpy, train an MLP, compiled for speed."""
import argparse
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("tabular")


def make_dataset(n, n_num, n_cat, seed):
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, n_num)) * rng.uniform(0.5, 20.0, size=n_num) + rng.uniform(-5, 5, size=n_num)
    cat = rng.integers(0, 12, size=(n, n_cat))
    logit = num[:, 0] * 0.1 - num[:, 1] * 0.05 + (cat[:, 0] % 3) - 1.0
    y = (logit + rng.normal(scale=0.5, size=n) > 0).astype(np.int64)
    return num, cat, y


class Standardizer:
    def fit(self, x):
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0) + 1e-6
        return self

    def transform(self, x):
        return (x - self.mean) / self.std


class ChurnMLP(nn.Module):
    def __init__(self, n_num, n_cat, card=12, emb=8, hidden=128):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(card, emb) for _ in range(n_cat))
        self.net = nn.Sequential(
            nn.Linear(n_num + n_cat * emb, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, num, cat):
        e = [emb(cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.net(torch.cat([num] + e, dim=1))


def batches(num, cat, y, bs, shuffle, rng):
    idx = rng.permutation(len(y)) if shuffle else np.arange(len(y))
    for i in range(0, len(idx) - bs + 1, bs):
        j = idx[i:i + bs]
        yield torch.from_numpy(num[j]), torch.from_numpy(cat[j]), torch.from_numpy(y[j])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    num, cat, y = make_dataset(8192, n_num=10, n_cat=3, seed=args.seed)
    split = int(0.8 * len(y))
    scaler = Standardizer().fit(num[:split])
    num = scaler.transform(num)

    model = ChurnMLP(n_num=10, n_cat=3)
    step_model = model if args.no_compile else torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        t0, tot, n = time.perf_counter(), 0.0, 0
        for xn, xc, yb in batches(num[:split], cat[:split], y[:split], args.batch_size, True, rng):
            loss = F.cross_entropy(step_model(xn, xc), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item() * len(yb)
            n += len(yb)
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for xn, xc, yb in batches(num[split:], cat[split:], y[split:], 512, False, rng):
                correct += (step_model(xn, xc).argmax(1) == yb).sum().item()
                total += len(yb)
        log.info("epoch %d train_loss %.4f val_acc %.3f (%.1fs)", epoch, tot / n, correct / total,
                 time.perf_counter() - t0)


if __name__ == "__main__":
    main()
