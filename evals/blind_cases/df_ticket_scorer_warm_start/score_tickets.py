"""Nightly batch scorer for support tickets.

Loads the ticket-priority encoder, compiles it with torch.compile and scores a
file of (synthetic, here) tokenized tickets in fixed-size padded batches.
The job is launched once per shard, so process start-up time matters.
"""
import argparse
import logging
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ticket_scorer")

PRIORITIES = ["low", "normal", "high", "urgent"]


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x, pad_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        attn_mask = pad_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = RMSNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = RMSNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)

    def forward(self, x, pad_mask):
        x = x + self.attn(self.norm1(x), pad_mask)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TicketEncoder(nn.Module):
    def __init__(self, vocab=8000, dim=128, heads=4, depth=2, max_len=128, n_classes=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, ids):
        pad_mask = ids != 0
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.norm(x)
        m = pad_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def synthetic_tickets(n, max_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(8, max_len + 1, (n,), generator=g)
    ids = torch.zeros(n, max_len, dtype=torch.long)
    for i, L in enumerate(lengths.tolist()):
        ids[i, :L] = torch.randint(1, vocab, (L,), generator=g)
    return ids


def load_model(ckpt, args):
    torch.manual_seed(0)
    model = TicketEncoder(vocab=args.vocab, max_len=args.max_len)
    if ckpt and os.path.exists(ckpt):
        model.load_state_dict(torch.load(ckpt, map_location="cpu"))
        log.info("loaded weights from %s", ckpt)
    else:
        log.info("no checkpoint found, using seeded init (smoke mode)")
    return model.eval()


def score(model, ids, batch_size):
    preds, confs = [], []
    for start in range(0, ids.shape[0], batch_size):
        batch = ids[start:start + batch_size]
        if batch.shape[0] < batch_size:
            pad = torch.zeros(batch_size - batch.shape[0], batch.shape[1], dtype=batch.dtype)
            pad[:, 0] = 1
            n_real = batch.shape[0]
            batch = torch.cat([batch, pad])
        else:
            n_real = batch_size
        logits = model(batch)[:n_real]
        p = logits.softmax(-1)
        conf, cls = p.max(-1)
        preds.append(cls)
        confs.append(conf)
    return torch.cat(preds), torch.cat(confs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="ticket_encoder.pt")
    ap.add_argument("--n-tickets", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))

    model = load_model(args.ckpt, args)
    if not args.no_compile:
        model = torch.compile(model)
    log.info("inductor cache dir: %s", os.environ.get("TORCHINDUCTOR_CACHE_DIR", "<default>"))

    ids = synthetic_tickets(args.n_tickets, args.max_len, args.vocab, seed=1000 + args.shard)

    t0 = time.perf_counter()
    model(ids[: args.batch_size])
    warm = time.perf_counter() - t0
    log.info("warm-up (first batch incl. compile): %.1fs", warm)

    t0 = time.perf_counter()
    preds, confs = score(model, ids, args.batch_size)
    elapsed = time.perf_counter() - t0
    counts = torch.bincount(preds, minlength=len(PRIORITIES)).tolist()
    log.info("scored %d tickets in %.2fs (%.1f tickets/s)", len(preds), elapsed,
             len(preds) / max(elapsed, 1e-9))
    log.info("priority histogram: %s", dict(zip(PRIORITIES, counts)))
    log.info("mean confidence: %.4f", confs.mean().item())
    print(f"startup_warmup_s={warm:.1f} total_scored={len(preds)}")


if __name__ == "__main__":
    main()
