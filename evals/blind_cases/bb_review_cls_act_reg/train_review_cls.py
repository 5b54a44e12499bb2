"""Review sentiment classifier: small token-mixer encoder trained on synthetic data.

Usage:
    python train_review_cls.py --mode both        # eager run, then compiled run, compare
    python train_review_cls.py --mode compile
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from regularizers import ActivationRegularizer

log = logging.getLogger("review_cls")


class MixerBlock(nn.Module):
    def __init__(self, dim, seq_len, hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mix = nn.Sequential(nn.Linear(seq_len, seq_len), nn.GELU(), nn.Linear(seq_len, seq_len))
        self.norm2 = nn.LayerNorm(dim)
        self.channel_mix = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(0.0), nn.Linear(hidden, dim))

    def forward(self, x):
        y = self.norm1(x).transpose(1, 2)
        x = x + self.token_mix(y).transpose(1, 2)
        return x + self.channel_mix(self.norm2(x))


class ReviewClassifier(nn.Module):
    def __init__(self, vocab, seq_len, dim=64, depth=3, hidden=128, n_classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, seq_len, dim) * 0.02)
        self.blocks = nn.ModuleList(MixerBlock(dim, seq_len, hidden) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, ids):
        x = self.embed(ids) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(1))


def make_data(n, vocab, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (n, seq_len), generator=g)
    # label depends on counts of "positive" and "negative" token ranges
    pos = (ids < vocab // 10).sum(1)
    neg = (ids >= vocab - vocab // 10).sum(1)
    labels = torch.where(pos > neg + 1, 2, torch.where(neg > pos + 1, 0, 1))
    return ids, labels


def run(args, use_compile):
    torch.manual_seed(args.seed)
    model = ReviewClassifier(args.vocab, args.seq_len)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20))
    reg = ActivationRegularizer(beta=args.ar_beta)
    fwd = torch.compile(model) if use_compile else model

    ids, labels = make_data(args.n_train, args.vocab, args.seq_len, seed=123)
    vids, vlabels = make_data(512, args.vocab, args.seq_len, seed=456)
    g = torch.Generator().manual_seed(args.seed)
    losses = []
    t0 = time.time()
    for step in range(args.steps):
        if step == args.ar_start:
            reg.enable()
            log.info("step %d: activation regularization on (beta=%.3g)", step, args.ar_beta)
        idx = torch.randint(0, args.n_train, (args.batch,), generator=g)
        model.train()
        logits = fwd(ids[idx])
        loss = F.cross_entropy(logits, labels[idx]) + reg.penalty()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % args.log_every == 0 or step == args.steps - 1:
            log.info("[%s] step %4d loss %.5f", "compiled" if use_compile else "eager", step, loss.item())
    model.eval()
    with torch.no_grad():
        acc = (fwd(vids).argmax(-1) == vlabels).float().mean().item()
        wnorm = math.sqrt(sum(p.pow(2).sum().item() for p in model.parameters()))
    reg.disable()
    log.info("[%s] done in %.1fs  val_acc %.4f  |w| %.5f", "compiled" if use_compile else "eager",
             time.time() - t0, acc, wnorm)
    return losses, acc, wnorm


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["eager", "compile", "both"], default="both")
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--vocab", type=int, default=2000)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--n-train", type=int, default=4096)
    p.add_argument("--ar-beta", type=float, default=2.0)
    p.add_argument("--ar-start", type=int, default=40)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")

    modes = {"eager": [False], "compile": [True], "both": [False, True]}[args.mode]
    results = {c: run(args, c) for c in modes}
    if args.mode == "both":
        le, ae, we = results[False]
        lc, ac, wc = results[True]
        first_bad = next((i for i, (a, b) in enumerate(zip(le, lc)) if abs(a - b) > 1e-3), None)
        max_diff = max(abs(a - b) for a, b in zip(le, lc))
        print(f"max |loss_eager - loss_compiled| = {max_diff:.5f}; first step differing by >1e-3: {first_bad}")
        print(f"final loss eager {le[-1]:.5f} compiled {lc[-1]:.5f}; val_acc eager {ae:.4f} compiled {ac:.4f}")
        print(f"|w| eager {we:.5f} compiled {wc:.5f}")
        if max_diff > 1e-3:
            print("MISMATCH: compiled training does not track eager")
            raise SystemExit(1)
        print("OK")


if __name__ == "__main__":
    main()
