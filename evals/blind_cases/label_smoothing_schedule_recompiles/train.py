"""Text-classification head training on cached sentence embeddings, with label-smoothing
annealing (start smooth, anneal to 0 so the model can become confident late in training).

    python train.py --steps 30
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


class Head(nn.Module):
    def __init__(self, d_in=128, d=256, n_cls=20, p_drop=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(d_in), nn.Linear(d_in, d), nn.GELU(),
                                 nn.Dropout(p_drop), nn.Linear(d, n_cls))

    def forward(self, x):
        return self.net(x)


@torch.compile
def loss_and_acc(model, x, y, label_smoothing):
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=label_smoothing)
    acc = (logits.argmax(-1) == y).float().mean()
    return loss, acc


def smoothing_at(step, total, start=0.2):
    return start * max(0.0, 1.0 - step / (0.8 * total))      # linear decay to 0 at 80% of training


def embedding_batches(steps, bsz, d_in=128, n_cls=20, seed=0):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(n_cls, d_in, generator=g)
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bsz,), generator=g)
        yield centers[y] + 3.0 * torch.randn(bsz, d_in, generator=g), y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--bsz", type=int, default=256)
    p.add_argument("--lr", type=float, default=2e-3)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    model = Head()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    t_start = time.time()
    for step, (x, y) in enumerate(embedding_batches(args.steps, args.bsz)):
        t = time.time()
        ls = smoothing_at(step, args.steps)
        loss, acc = loss_and_acc(model, x, y, ls)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        log.info("step %2d ls=%.3f loss=%.4f acc=%.3f  %.2fs", step, ls, loss.item(), acc.item(), time.time() - t)
    log.info("total %.1fs", time.time() - t_start)


if __name__ == "__main__":
    main()
