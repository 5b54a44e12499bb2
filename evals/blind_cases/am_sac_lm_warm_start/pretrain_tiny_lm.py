"""Short pretraining job for a small decoder-only LM (one of many sweep jobs).

Every sweep job is a fresh process on the same box and shares one Inductor cache
directory, so only the very first job should pay for compilation.
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from memsave import checkpointed, make_context_fn

log = logging.getLogger("pretrain")


class Block(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q = q.view(B, T, self.n_heads, -1).transpose(1, 2)
        k = k.view(B, T, self.n_heads, -1).transpose(1, 2)
        v = v.view(B, T, self.n_heads, -1).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.out(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self, vocab, d=192, n_layers=4, n_heads=4, ctx=128, context_fn=None):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList([Block(d, n_heads) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        self.context_fn = context_fn
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def forward(self, idx, targets):
        T = idx.size(1)
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            x = checkpointed(blk, x, context_fn=self.context_fn)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def synthetic_corpus(n_tokens, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    # a cheap Markov-ish stream so the loss actually goes down
    base = torch.randint(0, vocab, (n_tokens,), generator=g)
    return (base + torch.arange(n_tokens) % 7) % vocab


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--no-memsave", action="store_true", help="disable selective activation checkpointing")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("inductor cache dir: %s", os.environ.get("TORCHINDUCTOR_CACHE_DIR", "<default>"))

    torch.manual_seed(0)
    context_fn = None if args.no_memsave else make_context_fn()
    model = TinyLM(args.vocab, ctx=args.ctx, context_fn=context_fn)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    compiled = torch.compile(model)
    data = synthetic_corpus(200_000, args.vocab, seed=1)
    g = torch.Generator().manual_seed(2)

    t_start = time.perf_counter()
    for step in range(args.steps):
        ix = torch.randint(0, data.numel() - args.ctx - 1, (args.batch_size,), generator=g)
        x = torch.stack([data[i:i + args.ctx] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + args.ctx] for i in ix])
        t0 = time.perf_counter()
        loss = compiled(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        if step == 0:
            log.info("first step (includes compile): %.2fs", dt)
        elif step % 5 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f  %.0f ms/step", step, loss.item(), dt * 1e3)
    log.info("total wall time for %d steps: %.1fs", args.steps, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
