"""Token-classification (NER) service: a small ALiBi transformer encoder behind a thread pool.

Requests arrive with variable lengths; they are padded to a fixed bucket so the
compiled model sees one shape.  Run with --compile to use torch.compile.
"""
import argparse
import math
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn
import torch.nn.functional as F

LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]


class AlibiBiasCache:
    """Shared ALiBi bias tables, built lazily per sequence length.

    The service runs several worker threads, so the table is guarded by a lock.
    """

    def __init__(self, num_heads: int):
        self.num_heads = num_heads
        self._tables = {}
        self._lock = threading.Lock()
        start = 2 ** (-8.0 / num_heads)
        self.slopes = torch.tensor([start ** (i + 1) for i in range(num_heads)])

    def _build(self, seq_len: int) -> torch.Tensor:
        pos = torch.arange(seq_len)
        rel = (pos[None, :] - pos[:, None]).abs().float()
        return -self.slopes[:, None, None] * rel[None]

    def get(self, seq_len: int) -> torch.Tensor:
        with self._lock:
            table = self._tables.get(seq_len)
            if table is None:
                table = self._build(seq_len)
                self._tables[seq_len] = table
        return table


class AlibiSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, bias_cache: AlibiBiasCache, dropout: float = 0.0):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.bias_cache = bias_cache
        self.dropout = dropout

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + self.bias_cache.get(T).to(scores.dtype)
        scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        attn = F.dropout(attn, self.dropout, self.training)
        ctx = (attn @ v).transpose(1, 2).reshape(B, T, D)
        return self.out(ctx)


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, bias_cache):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = AlibiSelfAttention(d_model, n_heads, bias_cache)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x, key_padding_mask):
        x = x + self.attn(self.ln1(x), key_padding_mask)
        x = x + self.ff(self.ln2(x))
        return x


class NerTagger(nn.Module):
    def __init__(self, vocab=8000, d_model=256, n_heads=8, d_ff=1024, n_layers=6, n_labels=len(LABELS)):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=0)
        self.bias_cache = AlibiBiasCache(n_heads)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, self.bias_cache) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, n_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        key_padding_mask = attention_mask == 0
        h = self.embed(input_ids)
        for layer in self.layers:
            h = layer(h, key_padding_mask)
        return self.classifier(self.norm(h))


def pad_batch(seqs, bucket):
    ids = torch.zeros(len(seqs), bucket, dtype=torch.long)
    mask = torch.zeros(len(seqs), bucket, dtype=torch.long)
    for i, s in enumerate(seqs):
        s = s[:bucket]
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    return ids, mask


def make_requests(n_requests, batch_size, bucket, seed=0):
    g = torch.Generator().manual_seed(seed)
    reqs = []
    for _ in range(n_requests):
        lens = torch.randint(bucket // 3, bucket + 1, (batch_size,), generator=g)
        seqs = [torch.randint(1, 8000, (int(n),), generator=g) for n in lens]
        reqs.append(pad_batch(seqs, bucket))
    return reqs


class Service:
    def __init__(self, model, workers):
        self.model = model
        self.pool = ThreadPoolExecutor(max_workers=workers)

    def _handle(self, ids, mask):
        t0 = time.perf_counter()
        with torch.inference_mode():
            logits = self.model(ids, mask)
        tags = logits.argmax(-1)
        return tags, time.perf_counter() - t0

    def run(self, requests):
        futures = [self.pool.submit(self._handle, ids, mask) for ids, mask in requests]
        return [f.result() for f in futures]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--bucket", type=int, default=128)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--fullgraph", action="store_true", help="fail on any graph break (deploy check)")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = NerTagger().eval()
    reference = model
    if args.compile:
        model = torch.compile(model, fullgraph=args.fullgraph)

    warm = make_requests(2, args.batch_size, args.bucket, seed=123)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for ids, mask in warm:
            model(ids, mask)
    print(f"warm-up: {time.perf_counter() - t0:.1f}s (compile={args.compile})")

    requests = make_requests(args.requests, args.batch_size, args.bucket)
    svc = Service(model, args.workers)
    t0 = time.perf_counter()
    results = svc.run(requests)
    wall = time.perf_counter() - t0
    lat = sorted(r[1] * 1000 for r in results)
    print(f"served {len(results)} requests in {wall:.2f}s | p50 {statistics.median(lat):.1f} ms | p90 {lat[int(0.9 * len(lat))]:.1f} ms")

    with torch.inference_mode():
        ids, mask = requests[0]
        diff = (model(ids, mask) - reference(ids, mask)).abs().max().item()
    print(f"max |compiled - eager| logits on request 0: {diff:.2e}")


if __name__ == "__main__":
    main()
