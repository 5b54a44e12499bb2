#!/usr/bin/env python
"""Scoring worker for the search re-ranker.

Each worker process loads the ranking model, compiles it, warms it up on the
bucketed request shapes, then serves scoring requests (simulated here by a
fixed number of synthetic requests).  The orchestrator restarts workers on
every deploy, so warm-up time directly delays traffic shifting.
"""
import argparse
import atexit
import json
import logging
import os
import shutil
import tempfile
import time

import torch
import torch.nn as nn

log = logging.getLogger("ranker_worker")


class Ranker(nn.Module):
    """Two-tower-ish scorer: query/doc token embeddings -> pooled -> MLP."""

    def __init__(self, vocab=5000, dim=64, hidden=256, n_dense=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.dense_proj = nn.Linear(n_dense, dim)
        self.mlp = nn.Sequential(
            nn.Linear(4 * dim, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden // 2), nn.GELU(),
            nn.Linear(hidden // 2, 1),
        )

    @staticmethod
    def _pool(emb, ids):
        mask = (ids != 0).unsqueeze(-1).to(emb.dtype)
        return (emb * mask).sum(1) / mask.sum(1).clamp_min(1.0)

    def forward(self, q_ids, d_ids, dense):
        q = self._pool(self.tok(q_ids), q_ids)
        d = self._pool(self.tok(d_ids), d_ids)
        x = torch.cat([q, d, q * d, self.dense_proj(dense)], dim=-1)
        return self.mlp(x).squeeze(-1)


def setup_compile_cache(worker_id: int) -> str:
    # keep each worker's compiled artifacts separate so concurrent workers
    # on the same host never read half-written files from each other
    cache_dir = tempfile.mkdtemp(prefix=f"ranker-w{worker_id}-inductor-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
    return cache_dir


def make_request(batch, q_len, d_len, g):
    return (torch.randint(1, 5000, (batch, q_len), generator=g),
            torch.randint(1, 5000, (batch, d_len), generator=g),
            torch.randn(batch, 16, generator=g))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--worker-id", type=int, default=0)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--q-len", type=int, default=16)
    p.add_argument("--d-len", type=int, default=128)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--stats-json", default=None)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s w%(process)d %(levelname)s %(message)s")

    torch.set_num_threads(1)
    cache_dir = setup_compile_cache(args.worker_id)
    log.info("inductor cache dir: %s", cache_dir)

    torch.manual_seed(0)
    model = Ranker().eval()
    scorer = model if args.no_compile else torch.compile(model, dynamic=False)

    g = torch.Generator().manual_seed(args.worker_id)
    t0 = time.perf_counter()
    with torch.inference_mode():
        scorer(*make_request(args.batch, args.q_len, args.d_len, g))
    warmup_s = time.perf_counter() - t0
    log.info("warm-up done in %.2fs", warmup_s)

    latencies = []
    with torch.inference_mode():
        for _ in range(args.requests):
            req = make_request(args.batch, args.q_len, args.d_len, g)
            t = time.perf_counter()
            scores = scorer(*req)
            latencies.append(time.perf_counter() - t)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1e3
    log.info("served %d requests: p50 %.2fms p99 %.2fms (last score mean %.4f)",
             args.requests, p50, p99, scores.mean().item())

    stats = {"warmup_s": round(warmup_s, 2), "p50_ms": round(p50, 3), "p99_ms": round(p99, 3)}
    if not args.no_compile:
        from torch._dynamo.utils import counters
        stats["fxgraph_cache_hit"] = counters["inductor"]["fxgraph_cache_hit"]
        stats["fxgraph_cache_miss"] = counters["inductor"]["fxgraph_cache_miss"]
    log.info("worker stats: %s", json.dumps(stats))
    if args.stats_json:
        with open(args.stats_json, "w") as f:
            json.dump(stats, f)


if __name__ == "__main__":
    main()
