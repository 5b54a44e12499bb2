"""Pretraining loop for a small decoder LM on packed documents.

Several documents are packed into each fixed-length row; attention is masked so
tokens only see earlier tokens of their own document, and positions restart at
each document boundary.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train_packed_lm")


def make_packed_batch(batch_size, seq_len, vocab, gen):
    """Random documents packed into rows; returns tokens, per-token doc ids and the longest doc."""
    tokens = torch.randint(0, vocab, (batch_size, seq_len), generator=gen)
    doc_ids = torch.empty(batch_size, seq_len, dtype=torch.long)
    max_doc_len = 0
    for b in range(batch_size):
        pos, d = 0, 0
        while pos < seq_len:
            n = int(torch.randint(8, seq_len // 2, (1,), generator=gen))
            n = min(n, seq_len - pos)
            doc_ids[b, pos : pos + n] = d
            max_doc_len = max(max_doc_len, n)
            pos, d = pos + n, d + 1
    return tokens, doc_ids, max_doc_len


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.heads, D // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, D))
        return x + self.ff(self.ln2(x))


class PackedLM(nn.Module):
    def __init__(self, vocab, dim, heads, layers, max_positions):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_positions, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens, doc_ids, max_doc_len):
        B, T = tokens.shape
        # position inside each document (restarts at every boundary)
        idx = torch.arange(T).expand(B, T)
        starts = torch.ones_like(doc_ids, dtype=torch.bool)
        starts[:, 1:] = doc_ids[:, 1:] != doc_ids[:, :-1]
        start_idx = torch.cummax(torch.where(starts, idx, torch.zeros_like(idx)), dim=1).values
        positions = (idx - start_idx).clamp(max=max_doc_len - 1)
        same_doc = doc_ids[:, :, None] == doc_ids[:, None, :]
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        mask = (same_doc & causal)[:, None]
        x = self.tok(tokens) + self.pos(positions)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.head(self.ln_f(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    model = PackedLM(args.vocab, args.dim, 4, args.layers, args.seq_len)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    # shapes are fixed (packed rows), so static compilation is enough
    step_model = model if args.no_compile else torch.compile(model, dynamic=False)

    step_times = []
    for step in range(1, args.steps + 1):
        tokens, doc_ids, max_doc_len = make_packed_batch(args.batch_size, args.seq_len, args.vocab, gen)
        t0 = time.perf_counter()
        logits = step_model(tokens[:, :-1], doc_ids[:, :-1], max_doc_len)
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), tokens[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step_times.append(time.perf_counter() - t0)
        if step % args.log_every == 0:
            recent = step_times[-args.log_every :]
            log.info(
                "step %d loss %.4f ppl %.1f step_time %.3fs (max %.3fs)",
                step, loss.item(), math.exp(loss.item()), sum(recent) / len(recent), max(recent),
            )
    tail = step_times[len(step_times) // 2 :]
    log.info("mean step time over 2nd half: %.3fs", sum(tail) / len(tail))


if __name__ == "__main__":
    main()
