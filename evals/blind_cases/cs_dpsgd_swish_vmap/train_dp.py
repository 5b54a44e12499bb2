"""DP-SGD training of a small credit-risk classifier (tabular, synthetic data).

Per-example gradients are computed with torch.func (vmap over grad), clipped to
--clip, summed, noised and applied.  --compile compiles the per-example
gradient function, which is by far the hottest part of the step.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

from activations import LeanSwish

log = logging.getLogger("dp_train")


class RiskMLP(nn.Module):
    def __init__(self, n_num: int, n_cat: int, cat_card: int, hidden: int, n_cls: int = 2):
        super().__init__()
        self.cat_emb = nn.Embedding(cat_card, 8)
        d_in = n_num + n_cat * 8
        self.fc1 = nn.Linear(d_in, hidden)
        self.act1 = LeanSwish(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.act2 = LeanSwish(hidden)
        self.head = nn.Linear(hidden, n_cls)

    def forward(self, x_num, x_cat):
        e = self.cat_emb(x_cat).flatten(-2)
        h = torch.cat([x_num, e], dim=-1)
        h = self.act1(self.fc1(h))
        h = self.act2(self.fc2(h))
        return self.head(h)


def make_data(n, n_num, n_cat, cat_card, seed):
    g = torch.Generator().manual_seed(seed)
    x_num = torch.randn(n, n_num, generator=g)
    x_cat = torch.randint(0, cat_card, (n, n_cat), generator=g)
    w = torch.randn(n_num, generator=g)
    logits = x_num @ w + 0.5 * (x_cat[:, 0] % 3 == 0).float() - 0.3
    y = (torch.rand(n, generator=g) < torch.sigmoid(logits)).long()
    return x_num, x_cat, y


def build_per_example_grads(model):
    def loss_one(params, buffers, xn, xc, y):
        out = functional_call(model, (params, buffers), (xn.unsqueeze(0), xc.unsqueeze(0)))
        return F.cross_entropy(out, y.unsqueeze(0))

    return vmap(grad(loss_one), in_dims=(None, None, 0, 0, 0))


def dp_step(model, per_ex_grads, params, buffers, batch, clip, noise_mult, lr, gen):
    xn, xc, y = batch
    grads = per_ex_grads(params, buffers, xn, xc, y)
    names = list(grads.keys())
    flat = torch.cat([grads[k].flatten(1) for k in names], dim=1)
    norms = flat.norm(dim=1)
    scale = (clip / (norms + 1e-6)).clamp(max=1.0)
    bs = y.shape[0]
    with torch.no_grad():
        for k in names:
            g = (grads[k] * scale.view(-1, *([1] * (grads[k].dim() - 1)))).sum(0)
            g = g + noise_mult * clip * torch.randn(g.shape, generator=gen)
            params[k].sub_(lr * g / bs)
    return norms


@torch.no_grad()
def evaluate(model, data):
    xn, xc, y = data
    logits = model(xn, xc)
    loss = F.cross_entropy(logits, y).item()
    acc = (logits.argmax(-1) == y).float().mean().item()
    return loss, acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--noise-mult", type=float, default=0.6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    n_num, n_cat, cat_card = 12, 3, 20
    train = make_data(2048, n_num, n_cat, cat_card, seed=1)
    val = make_data(512, n_num, n_cat, cat_card, seed=2)
    model = RiskMLP(n_num, n_cat, cat_card, args.hidden)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    per_ex = build_per_example_grads(model)
    if args.compile:
        per_ex = torch.compile(per_ex)
    gen = torch.Generator().manual_seed(args.seed + 100)

    n = train[2].shape[0]
    steps_per_epoch = n // args.batch_size
    q = args.batch_size / n
    log.info("params=%d steps/epoch=%d sampling rate=%.4f compile=%s",
             sum(p.numel() for p in params.values()), steps_per_epoch, q, args.compile)
    for epoch in range(args.epochs):
        perm = torch.randperm(n, generator=gen)
        t0 = time.perf_counter()
        clipped = 0
        for step in range(steps_per_epoch):
            idx = perm[step * args.batch_size:(step + 1) * args.batch_size]
            batch = tuple(t[idx] for t in train)
            norms = dp_step(model, per_ex, params, buffers, batch, args.clip,
                            args.noise_mult, args.lr, gen)
            clipped += int((norms > args.clip).sum())
            if step == 0 and epoch == 0:
                log.info("first step done in %.1fs (median per-example grad norm %.3f)",
                         time.perf_counter() - t0, norms.median().item())
        vl, va = evaluate(model, val)
        log.info("epoch %d  val_loss %.4f  val_acc %.3f  clipped %.1f%%  %.1fs", epoch, vl, va,
                 100.0 * clipped / (steps_per_epoch * args.batch_size), time.perf_counter() - t0)
    log.info("done")


if __name__ == "__main__":
    main()
