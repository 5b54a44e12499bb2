"""Train a small character-level transformer LM on generated release notes."""
import argparse
import functools
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from data import IGNORE_INDEX, ChunkedDocs, CharVocab, collate, make_corpus

log = logging.getLogger("charlm")


class Block(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, n_head, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class CharLM(nn.Module):
    def __init__(self, vocab_size, block_size, d=96, n_layer=2, n_head=4):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d)
        self.pos = nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList(Block(d, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab_size, bias=False)
        self.head.weight = self.tok.weight
        nn.init.normal_(self.tok.weight, std=0.02)
        mask = torch.triu(torch.ones(block_size, block_size, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal_mask", mask, persistent=False)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            x = blk(x, self.causal_mask[:T, :T])
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=IGNORE_INDEX
            )
        return logits, loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--docs", type=int, default=400)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--seed", type=int, default=1234)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    docs = make_corpus(args.docs, args.seed)
    vocab = CharVocab(docs)
    ds = ChunkedDocs(docs, vocab, args.block_size)
    dl = DataLoader(
        ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
        collate_fn=functools.partial(collate, block_size=args.block_size),
    )
    log.info("vocab=%d samples=%d batches/epoch=%d", len(vocab), len(ds), len(dl))

    model = CharLM(len(vocab), args.block_size)
    log.info("params=%.2fM", sum(p.numel() for p in model.parameters()) / 1e6)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_fn = torch.compile(model) if args.compile else model

    step, t0, running = 0, time.perf_counter(), 0.0
    model.train()
    for epoch in range(args.epochs):
        for x, y in dl:
            _, loss = step_fn(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            running += loss.item()
            step += 1
            if step % args.log_every == 0:
                avg = running / args.log_every
                log.info("epoch %d step %d loss %.4f ppl %.2f (%.1fs)",
                         epoch, step, avg, math.exp(avg), time.perf_counter() - t0)
                running = 0.0
            if step >= args.max_steps:
                break
    log.info("done: %d steps in %.1fs", step, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
