"""Delivery-ETA scorer: compiled model behind an online endpoint and a nightly backfill job.

usage: python serve_eta.py [--requests 40] [--eager] [--seed 0]
"""
import argparse
import logging
import time

import numpy as np
import torch
import torch.nn as nn

from features import (CATEGORICAL, NUMERIC, make_online_rows, partition_to_tensors,
                      read_store_partition, rows_to_tensors)

log = logging.getLogger("eta")


class EtaModel(nn.Module):
    def __init__(self, n_num, cat_cards, emb_dim=8, hidden=128):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in cat_cards)
        self.num_norm = nn.LayerNorm(n_num)
        d_in = n_num + emb_dim * len(cat_cards)
        self.mlp = nn.Sequential(
            nn.Linear(d_in, hidden), nn.GELU(),
            nn.Linear(hidden, hidden), nn.GELU(),
            nn.Linear(hidden, 2),
        )

    def forward(self, num, cat):
        num = torch.sign(num) * torch.log1p(num.abs())
        parts = [self.num_norm(num)]
        for i, emb in enumerate(self.embs):
            parts.append(emb(cat[:, i]))
        h = self.mlp(torch.cat(parts, dim=-1))
        mu, log_sigma = h.unbind(-1)
        eta_min = torch.nn.functional.softplus(mu) * 10.0
        return eta_min, log_sigma.clamp(-5, 5).exp()


class Scorer:
    def __init__(self, model, compile_model=True):
        self.model = model.eval()
        self.fn = torch.compile(self.model, dynamic=True) if compile_model else self.model
        self.latencies = {"online": [], "backfill": []}

    @torch.no_grad()
    def score(self, num, cat, source):
        t0 = time.perf_counter()
        eta, sigma = self.fn(num.float(), cat)
        dt = time.perf_counter() - t0
        self.latencies[source].append(dt)
        return eta, sigma, dt

    def warmup(self, sizes):
        for b in sizes:
            num = torch.randn(b, len(NUMERIC))
            cat = torch.zeros(b, len(CATEGORICAL), dtype=torch.long)
            self.score(num, cat, "online")
        self.latencies = {"online": [], "backfill": []}


def pct(xs, q):
    return 1000.0 * float(np.percentile(np.array(xs), q)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--stall-ms", type=float, default=500.0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = EtaModel(len(NUMERIC), list(CATEGORICAL.values()))
    scorer = Scorer(model, compile_model=not args.eager)

    t0 = time.perf_counter()
    scorer.warmup([2, 8, 32, 64])
    log.info("warm-up done in %.1fs", time.perf_counter() - t0)

    stalls = 0
    for i in range(args.requests):
        if i % 4 == 3:
            cols = read_store_partition(rng, int(rng.integers(100, 400)))
            num, cat = partition_to_tensors(cols, packed_block=(i % 8 == 7))
            source = "backfill"
        else:
            rows = make_online_rows(rng, int(rng.integers(2, 48)))
            num, cat = rows_to_tensors(rows)
            source = "online"
        eta, sigma, dt = scorer.score(num, cat, source)
        if dt * 1000 > args.stall_ms:
            stalls += 1
            log.warning("req %d (%s, n=%d) took %.0f ms", i, source, num.shape[0], dt * 1000)

    for src, xs in scorer.latencies.items():
        log.info("%-8s n=%3d p50=%.2f ms p99=%.1f ms max=%.1f ms",
                 src, len(xs), pct(xs, 50), pct(xs, 99), 1000 * max(xs))
    log.info("stalls over %.0f ms after warm-up: %d", args.stall_ms, stalls)


if __name__ == "__main__":
    main()
