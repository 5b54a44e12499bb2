"""Slot-tagging inference server (batch simulator).

Replays a request log against the compiled tagger and reports per-request
latency so we can size the CPU serving pool.
"""
import argparse
import logging
import math
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("tagger.serve")

VOCAB = 4000
NUM_TAGS = 17
PAD_ID = 0


class TaggerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout=0.1):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_bias):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=key_bias)
        att = att.transpose(1, 2).reshape(b, t, d)
        x = x + self.drop(self.proj(att))
        x = x + self.drop(self.ff(self.ln2(x)))
        return x


class SlotTagger(nn.Module):
    def __init__(self, d_model=64, n_heads=4, n_layers=2, d_ff=128, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model, padding_idx=PAD_ID)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([TaggerBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, NUM_TAGS)

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        pos = torch.arange(t, device=input_ids.device)
        x = self.tok(input_ids) + self.pos(pos)[None]
        keep = attention_mask.to(torch.bool)
        key_bias = torch.zeros(b, 1, 1, t, dtype=x.dtype, device=x.device)
        key_bias = key_bias.masked_fill(~keep[:, None, None, :], float("-inf"))
        for blk in self.blocks:
            x = blk(x, key_bias)
        logits = self.head(self.norm(x))
        return logits.argmax(-1) * keep


# ---------------------------------------------------------------- request sources
def _lengths(rng, n):
    return rng.integers(6, 48, size=n)


def from_json_api(rng, batch):
    """Requests from the public JSON API: python lists, decoded per request."""
    lens = _lengths(rng, batch)
    t = int(lens.max())
    ids = [[int(rng.integers(1, VOCAB)) for _ in range(n)] + [PAD_ID] * (t - n) for n in lens]
    mask = [[1] * n + [0] * (t - n) for n in lens]
    return torch.tensor(ids), torch.tensor(mask)


def from_batch_cache(rng, batch):
    """Nightly re-tagging job: pre-tokenized shards stored as compact numpy arrays."""
    lens = _lengths(rng, batch)
    t = int(lens.max())
    ids = np.zeros((batch, t), dtype=np.int32)
    mask = np.zeros((batch, t), dtype=np.bool_)
    for i, n in enumerate(lens):
        ids[i, :n] = rng.integers(1, VOCAB, size=n)
        mask[i, :n] = True
    return torch.from_numpy(ids), torch.from_numpy(mask)


def from_grpc_gateway(rng, batch):
    """gRPC gateway: dense tensors built by the gateway's protobuf decoder."""
    lens = _lengths(rng, batch)
    t = int(lens.max())
    ids = torch.randint(1, VOCAB, (batch, t))
    mask = (torch.arange(t)[None, :] < torch.as_tensor(lens)[:, None]).long()
    return ids * mask, mask


SOURCES = {"json": from_json_api, "cache": from_batch_cache, "grpc": from_grpc_gateway}


def request_log(n_requests, seed):
    rng = np.random.default_rng(seed)
    weights = np.array([0.7, 0.2, 0.1])
    names = list(SOURCES)
    for i in range(n_requests):
        src = names[rng.choice(len(names), p=weights)] if i >= 5 else "json"
        batch = int(rng.integers(2, 9))
        ids, mask = SOURCES[src](rng, batch)
        yield i, src, ids, mask


# ---------------------------------------------------------------- serving loop
def warm_up(model, n, seed):
    rng = np.random.default_rng(seed + 1000)
    t0 = time.perf_counter()
    for _ in range(n):
        ids, mask = from_json_api(rng, int(rng.integers(2, 9)))
        model(ids, mask)
    log.info("warm-up: %d batches in %.2fs", n, time.perf_counter() - t0)


def serve(model, n_requests, seed, slow_ms):
    lat = []
    by_src = {}
    for i, src, ids, mask in request_log(n_requests, seed):
        t0 = time.perf_counter()
        tags = model(ids, mask)
        ms = (time.perf_counter() - t0) * 1e3
        lat.append(ms)
        by_src.setdefault(src, []).append(ms)
        if ms > slow_ms:
            log.warning("slow request %d: %.0f ms (batch=%d, len=%d, src=%s)",
                        i, ms, ids.shape[0], ids.shape[1], src)
        assert tags.shape == ids.shape
    return lat, by_src


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(math.ceil(q / 100 * len(xs))) - 1)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--slow-ms", type=float, default=250.0)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    model = SlotTagger().eval()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("SlotTagger: %.2fM params", n_params / 1e6)
    if not args.no_compile:
        model = torch.compile(model, dynamic=True)

    with torch.inference_mode():
        warm_up(model, args.warmup, args.seed)
        t0 = time.perf_counter()
        lat, by_src = serve(model, args.requests, args.seed, args.slow_ms)
        wall = time.perf_counter() - t0

    log.info("served %d requests in %.2fs", len(lat), wall)
    log.info("latency ms: p50=%.2f p90=%.2f p99=%.2f max=%.0f",
             pct(lat, 50), pct(lat, 90), pct(lat, 99), max(lat))
    for src, xs in sorted(by_src.items()):
        log.info("  %-5s n=%3d median=%.2f ms max=%.0f ms", src, len(xs), statistics.median(xs), max(xs))
    log.info("requests over %.0f ms: %d", args.slow_ms, sum(x > args.slow_ms for x in lat))


if __name__ == "__main__":
    main()
