"""Train the subscriber churn model (tabular MLP, recency-weighted BCE)."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from recency import RecencyWeighter

log = logging.getLogger("churn")

NUM_DENSE = 24
CARDINALITIES = {"plan": 6, "region": 12, "device": 5, "channel": 8}


def make_synthetic(n, seed):
    g = torch.Generator().manual_seed(seed)
    dense = torch.randn(n, NUM_DENSE, generator=g)
    cats = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CARDINALITIES.values()], 1)
    age = torch.rand(n, generator=g) * 400.0  # days since the interaction was logged
    logit = dense[:, :4].sum(1) * 0.7 - 0.4 * (cats[:, 0] == 2).float() + 0.3 * torch.randn(n, generator=g)
    label = (logit > 0.2).float()
    return TensorDataset(dense, cats, age, label)


class ChurnNet(nn.Module):
    def __init__(self, emb_dim=8, hidden=128, dropout=0.1):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in CARDINALITIES.values())
        in_dim = NUM_DENSE + emb_dim * len(CARDINALITIES)
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, 1),
        )

    def forward(self, dense, cats):
        embs = [e(cats[:, i]) for i, e in enumerate(self.embs)]
        return self.mlp(torch.cat([dense, *embs], dim=1)).squeeze(1)


class Objective(nn.Module):
    """Model + recency-weighted BCE, compiled as one unit."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.weighter = RecencyWeighter()

    def forward(self, dense, cats, age, label):
        logits = self.net(dense, cats)
        per_example = F.binary_cross_entropy_with_logits(logits, label, reduction="none")
        w = self.weighter(age)
        loss = (w * per_example).sum() / w.sum()
        return loss, logits


@torch.no_grad()
def evaluate(net, loader):
    net.eval()
    correct = total = 0
    for dense, cats, age, label in loader:
        pred = (net(dense, cats) > 0).float()
        correct += (pred == label).sum().item()
        total += label.numel()
    net.train()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--train-size", type=int, default=8192)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    train_ds = make_synthetic(args.train_size, seed=args.seed)
    val_ds = make_synthetic(2048, seed=args.seed + 1)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=1024)

    net = ChurnNet()
    objective = Objective(net)
    step_fn = torch.compile(objective) if args.compile else objective
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    log.info("params=%d compile=%s torch=%s", sum(p.numel() for p in net.parameters()), args.compile, torch.__version__)

    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        running, n = 0.0, 0
        for step, (dense, cats, age, label) in enumerate(train_dl):
            loss, _ = step_fn(dense, cats, age, label)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            running += loss.item()
            n += 1
            if step % 10 == 0:
                log.info("epoch %d step %d loss %.4f", epoch, step, loss.item())
        acc = evaluate(net, val_dl)
        log.info("epoch %d done: mean loss %.4f val acc %.4f (%.1fs)", epoch, running / n, acc, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
