"""Ticket-router inference worker: startup + smoke-load test.

Loads the intent/priority router, compiles it, warms it up on every padding
bucket, then replays a burst of traffic and checks the latency SLO that the
deploy pipeline gates on.
"""
import math
import os
import random
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 8000
D_MODEL = 192
N_HEADS = 6
N_LAYERS = 2
N_INTENTS = 24
BUCKETS = (32, 64, 128)
MAX_BATCH = 8

# deployment knobs (normally from the helm values)
LOAD_THREADS = int(os.environ.get("ROUTER_LOAD_THREADS", "4"))
SERVE_THREADS = int(os.environ.get("ROUTER_SERVE_THREADS", "1"))
SLO_MS = float(os.environ.get("ROUTER_SLO_MS", "250"))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.h, d // self.h).transpose(1, 2)
        k = k.view(b, t, self.h, d // self.h).transpose(1, 2)
        v = v.view(b, t, self.h, d // self.h).transpose(1, 2)
        attn_mask = pad_mask[:, None, None, :]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class TicketRouter(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL, padding_idx=0)
        self.pos = nn.Embedding(max(BUCKETS), D_MODEL)
        self.blocks = nn.ModuleList(Block(D_MODEL, N_HEADS) for _ in range(N_LAYERS))
        self.ln = nn.LayerNorm(D_MODEL)
        self.intent = nn.Linear(D_MODEL, N_INTENTS)
        self.priority = nn.Linear(D_MODEL, 1)

    def forward(self, ids):
        pad_mask = ids != 0
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.ln(x)
        m = pad_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.intent(pooled).log_softmax(-1), torch.sigmoid(self.priority(pooled)).squeeze(-1)


def bucket_for(n):
    for b in BUCKETS:
        if n <= b:
            return b
    return BUCKETS[-1]


def collate(token_lists):
    longest = max(len(t) for t in token_lists)
    width = bucket_for(longest)
    # always a full batch: the compiled graph only ever sees MAX_BATCH rows
    out = torch.zeros(MAX_BATCH, width, dtype=torch.long)
    for i, toks in enumerate(token_lists):
        toks = toks[:width]
        out[i, : len(toks)] = torch.tensor(toks)
    return out


def fake_request(rng):
    n_tickets = rng.randint(1, MAX_BATCH)
    return [[rng.randint(1, VOCAB - 1) for _ in range(rng.randint(8, 120))] for _ in range(n_tickets)]


def load_model():
    # weight init / checkpoint restore is much faster with the full pool
    torch.set_num_threads(LOAD_THREADS)
    torch.manual_seed(1234)
    model = TicketRouter().eval()
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=1.0 / math.sqrt(p.shape[-1]))
    compiled = torch.compile(model, dynamic=True)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for width in BUCKETS:
            ids = torch.randint(1, VOCAB, (MAX_BATCH, width))
            compiled(ids)
    print(f"[startup] compiled + warmed {len(BUCKETS)} buckets in {time.perf_counter() - t0:.1f}s")
    return model, compiled


def configure_runtime():
    # each pod runs several workers; keep each one on its own core
    torch.set_num_threads(SERVE_THREADS)


def serve(compiled, n_requests=60, seed=7):
    rng = random.Random(seed)
    lat_ms = []
    routed = {}
    with torch.inference_mode():
        for _ in range(n_requests):
            req = fake_request(rng)
            t0 = time.perf_counter()
            ids = collate(req)
            logp, prio = compiled(ids)
            top = logp[: len(req)].argmax(-1).tolist()
            lat_ms.append((time.perf_counter() - t0) * 1e3)
            for k in top:
                routed[k] = routed.get(k, 0) + 1
    return lat_ms, routed


def main():
    t_start = time.perf_counter()
    model, compiled = load_model()
    configure_runtime()

    lat_ms, routed = serve(compiled)
    p50 = statistics.median(lat_ms)
    p99 = sorted(lat_ms)[int(0.99 * (len(lat_ms) - 1))]
    worst = max(lat_ms)
    slow = [i for i, v in enumerate(lat_ms) if v > SLO_MS]
    print(f"[serve] requests={len(lat_ms)} p50={p50:.1f}ms p99={p99:.1f}ms max={worst:.1f}ms")
    print(f"[serve] first 5 latencies (ms): {[round(v, 1) for v in lat_ms[:5]]}")
    print(f"[serve] intents routed: {len(routed)} distinct")

    # parity spot-check against the eager module
    with torch.inference_mode():
        ids = collate(fake_request(random.Random(99)))
        ref, _ = model(ids)
        got, _ = compiled(ids)
    print(f"[check] max |compiled - eager| logprob diff = {(ref - got).abs().max().item():.2e}")
    print(f"[total] {time.perf_counter() - t_start:.1f}s wall")

    if slow:
        print(f"SLO GATE FAILED: {len(slow)} request(s) over {SLO_MS:.0f} ms after warm-up "
              f"(indices {slow[:10]}, worst {worst:.0f} ms)")
        raise SystemExit(1)
    print("SLO GATE PASSED")


if __name__ == "__main__":
    main()
