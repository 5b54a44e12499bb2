"""Tabular classifier with an EMA copy of the classification head.

Every epoch we report validation accuracy for the live head and for the EMA head.
The EMA head is swapped in temporarily for evaluation without registering it as a
submodule (so it never shows up in model.parameters(), the optimizer or the state_dict).

    python train_ema.py --epochs 3            # eager
    python train_ema.py --epochs 3 --compile
"""
import argparse
import copy
import logging
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ema")


class Classifier(nn.Module):
    def __init__(self, d_in=32, d_hidden=128, n_cls=4):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, d_hidden), nn.GELU(),
                                   nn.Linear(d_hidden, d_hidden), nn.GELU())
        self.head = nn.Linear(d_hidden, n_cls)

    def forward(self, x):
        return self.head(self.trunk(x))


@torch.no_grad()
def ema_update(ema: nn.Module, live: nn.Module, decay: float):
    for pe, pl in zip(ema.parameters(), live.parameters()):
        pe.lerp_(pl, 1.0 - decay)


@contextmanager
def swapped_head(model: nn.Module, head: nn.Module):
    """Temporarily use `head` for forward, without registering it as a child module."""
    object.__setattr__(model, "head", head)   # instance attr shadows model._modules["head"]
    try:
        yield
    finally:
        del model.__dict__["head"]


def make_data(n, d_in=32, n_cls=4, seed=0):
    centers = torch.randn(n_cls, d_in, generator=torch.Generator().manual_seed(1234)) * 0.4
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_cls, (n,), generator=g)
    x = centers[y] + torch.randn(n, d_in, generator=g) * 2.0
    return x, y


@torch.no_grad()
def evaluate(fwd, x, y):
    logits = fwd(x)
    return (logits.argmax(-1) == y).float().mean().item(), F.cross_entropy(logits, y).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--ema-decay", type=float, default=0.98)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    xtr, ytr = make_data(args.steps_per_epoch * args.batch_size, seed=0)
    xva, yva = make_data(2048, seed=1)
    model = Classifier()
    ema_head = copy.deepcopy(model.head).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    fwd = torch.compile(model) if args.compile else model

    for epoch in range(args.epochs):
        model.train()
        for s in range(args.steps_per_epoch):
            xb = xtr[s * args.batch_size:(s + 1) * args.batch_size]
            yb = ytr[s * args.batch_size:(s + 1) * args.batch_size]
            loss = F.cross_entropy(fwd(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema_update(ema_head, model.head, args.ema_decay)
        model.eval()
        acc_live, vl_live = evaluate(fwd, xva, yva)
        with swapped_head(model, ema_head):
            acc_ema, vl_ema = evaluate(fwd, xva, yva)
        log.info("epoch %d train_loss %.4f | live: val_acc=%.4f val_loss=%.5f | ema: val_acc=%.4f val_loss=%.5f",
                 epoch, loss.item(), acc_live, vl_live, acc_ema, vl_ema)


if __name__ == "__main__":
    main()
