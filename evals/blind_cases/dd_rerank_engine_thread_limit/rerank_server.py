"""Cross-encoder reranking service (offline replay harness).

Requests are padded to a fixed set of length buckets so that every bucket
gets its own static-shape compiled graph.  All model work runs on a single
dedicated engine thread, the same way the production server does it, so
the HTTP threads never touch the model directly.

Usage:
    python rerank_server.py --requests 300 --batch 8
"""
import argparse
import logging
import math
import random
import statistics
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F

# One compiled graph per length bucket (see BUCKETS below); the default of 8
# is too small for our bucket table.
torch._dynamo.config.recompile_limit = 32

log = logging.getLogger("rerank")

BUCKETS = (32, 48, 64, 80, 96, 128, 160, 192, 256)
VOCAB = 8000
PAD_ID = 0
CLS_ID = 1
SEP_ID = 2


class Block(nn.Module):
    def __init__(self, dim, heads, ffn_mult=4, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(
            nn.Linear(dim, ffn_mult * dim), nn.GELU(), nn.Linear(ffn_mult * dim, dim)
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_mask):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        attn_mask = key_mask[:, None, None, :]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        a = a.transpose(1, 2).reshape(b, t, d)
        x = x + self.drop(self.proj(a))
        x = x + self.drop(self.ff(self.ln2(x)))
        return x


class CrossEncoder(nn.Module):
    def __init__(self, vocab=VOCAB, dim=128, heads=4, layers=1, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=PAD_ID)
        self.pos = nn.Embedding(max_len, dim)
        self.seg = nn.Embedding(2, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, ids, segments, key_mask):
        t = ids.shape[1]
        pos = torch.arange(t, device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None] + self.seg(segments)
        for blk in self.blocks:
            x = blk(x, key_mask)
        return self.score(self.norm(x[:, 0])).squeeze(-1)


def bucket_for(n):
    for b in BUCKETS:
        if n <= b:
            return b
    return BUCKETS[-1]


def make_request(rng, batch):
    """A query plus `batch` candidate passages, already tokenized."""
    q_len = rng.randint(3, 16)
    # passage lengths follow a long-tailed distribution like our traffic
    p_len = min(int(rng.lognormvariate(3.6, 0.6)), BUCKETS[-1] - q_len - 3)
    query = [rng.randrange(3, VOCAB) for _ in range(q_len)]
    pairs = []
    for _ in range(batch):
        n = max(4, p_len + rng.randint(-4, 4))
        n = min(n, BUCKETS[-1] - q_len - 3)
        passage = [rng.randrange(3, VOCAB) for _ in range(n)]
        pairs.append((query, passage))
    return pairs


def collate(pairs):
    seqs, segs = [], []
    for q, p in pairs:
        seqs.append([CLS_ID] + q + [SEP_ID] + p + [SEP_ID])
        segs.append([0] * (len(q) + 2) + [1] * (len(p) + 1))
    L = bucket_for(max(len(s) for s in seqs))
    ids = torch.full((len(seqs), L), PAD_ID, dtype=torch.long)
    seg = torch.zeros((len(seqs), L), dtype=torch.long)
    for i, (s, g) in enumerate(zip(seqs, segs)):
        ids[i, : len(s)] = torch.tensor(s)
        seg[i, : len(g)] = torch.tensor(g)
    return ids, seg, ids.ne(PAD_ID), L


class Engine:
    """Owns the model; every call runs on the single engine thread."""

    def __init__(self, model, compile_model):
        self.model = model.eval()
        self.fn = torch.compile(model, dynamic=False, fullgraph=True) if compile_model else model
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engine")

    def _run(self, ids, seg, mask):
        with torch.inference_mode():
            return self.fn(ids, seg, mask)

    def score(self, ids, seg, mask):
        return self.pool.submit(self._run, ids, seg, mask).result()

    def warmup(self, batch):
        for L in BUCKETS:
            ids = torch.randint(3, VOCAB, (batch, L))
            seg = torch.zeros_like(ids)
            mask = torch.ones_like(ids, dtype=torch.bool)
            t0 = time.perf_counter()
            self.score(ids, seg, mask)
            log.info("warmup bucket %3d: %.2fs", L, time.perf_counter() - t0)

    def close(self):
        self.pool.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eager", action="store_true", help="skip torch.compile")
    args = ap.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    model = CrossEncoder()
    engine = Engine(model, compile_model=not args.eager)
    t0 = time.perf_counter()
    engine.warmup(args.batch)
    log.info("warmup done in %.1fs", time.perf_counter() - t0)

    rng = random.Random(args.seed)
    lat = defaultdict(list)
    t0 = time.perf_counter()
    for _ in range(args.requests):
        ids, seg, mask, L = collate(make_request(rng, args.batch))
        t = time.perf_counter()
        scores = engine.score(ids, seg, mask)
        lat[L].append((time.perf_counter() - t) * 1e3)
        assert torch.isfinite(scores).all()
    wall = time.perf_counter() - t0
    engine.close()

    log.info("served %d requests in %.2fs (%.1f req/s)", args.requests, wall, args.requests / wall)
    log.info("bucket  count  p50_ms  p90_ms")
    for L in BUCKETS:
        xs = sorted(lat.get(L, []))
        if not xs:
            continue
        p90 = xs[min(len(xs) - 1, math.ceil(0.9 * len(xs)) - 1)]
        log.info("%6d  %5d  %6.2f  %6.2f", L, len(xs), statistics.median(xs), p90)


if __name__ == "__main__":
    main()
