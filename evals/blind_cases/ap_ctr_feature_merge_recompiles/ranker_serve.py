"""Replay a day's worth of ranking traffic through the CTR model (eager vs torch.compile).

Features for each micro-batch are fetched from four feature stores in parallel and merged
as the lookups come back, then handed to the ranker as name -> tensor dicts.
"""
import argparse
import logging
import random
import statistics
import time

import torch
import torch.nn as nn

log = logging.getLogger("ranker")

DENSE_STORES = {
    "user": ["age", "tenure_days", "sessions_30d"],
    "item": ["price", "ctr_7d", "dwell_p50"],
    "context": ["hour_sin", "hour_cos", "is_weekend"],
    "session": ["pos_in_feed", "scroll_depth", "time_since_open"],
}
SPARSE_FEATURES = {"user_bucket": 50_000, "item_id": 200_000, "category": 2_000, "device": 16}


class FeatureStore:
    def __init__(self, name, cols, seed):
        self.name, self.cols = name, cols
        self.rng = random.Random(seed)

    def latency_ms(self):
        return self.rng.uniform(0.5, 4.0)

    def lookup(self, n):
        return {c: torch.randn(n) for c in self.cols}


def fetch_batch(stores, n, rng):
    """Query every store; results are merged in the order the lookups complete."""
    pending = sorted(stores, key=lambda s: s.latency_ms())
    dense = {}
    for store in pending:
        dense.update(store.lookup(n))
    sparse = {name: torch.randint(0, card, (n,), generator=rng) for name, card in SPARSE_FEATURES.items()}
    return dense, sparse


class MLP(nn.Sequential):
    def __init__(self, dims):
        layers = []
        for a, b in zip(dims[:-1], dims[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        super().__init__(*layers[:-1])


class CTRRanker(nn.Module):
    def __init__(self, dense_names, sparse_cards, emb_dim=32):
        super().__init__()
        self.dense_names = list(dense_names)
        self.emb = nn.ModuleDict({k: nn.EmbeddingBag(c, emb_dim, mode="sum") for k, c in sparse_cards.items()})
        self.dense_norm = nn.LayerNorm(len(self.dense_names))
        self.bottom = MLP([len(self.dense_names), 128, 64, emb_dim])
        n_vec = len(sparse_cards) + 1
        self.top = MLP([emb_dim + n_vec * (n_vec - 1) // 2, 256, 128, 1])

    def forward(self, dense, sparse):
        # column order is made canonical here, so callers can pass features in any order
        x = torch.stack([col for _, col in sorted(dense.items())], dim=1)
        x = self.bottom(self.dense_norm(x))
        vecs = [x] + [self.emb[name](ids.unsqueeze(1)) for name, ids in sorted(sparse.items())]
        v = torch.stack(vecs, dim=1)
        inter = torch.bmm(v, v.transpose(1, 2))
        iu = torch.triu_indices(v.shape[1], v.shape[1], offset=1)
        z = torch.cat([x, inter[:, iu[0], iu[1]]], dim=1)
        return torch.sigmoid(self.top(z)).squeeze(1)


def replay(model, stores, args, tag):
    rng = torch.Generator().manual_seed(args.seed)
    lat, scores = [], []
    t_start = time.perf_counter()
    with torch.inference_mode():
        for i in range(args.batches):
            dense, sparse = fetch_batch(stores, args.batch_size, rng)
            t0 = time.perf_counter()
            p = model(dense, sparse)
            lat.append((time.perf_counter() - t0) * 1e3)
            scores.append(p.mean().item())
            if (i + 1) % args.log_every == 0:
                log.info("[%s] batch %4d  last %.2f ms  mean pCTR %.4f", tag, i + 1, lat[-1], scores[-1])
    total = time.perf_counter() - t_start
    steady = lat[args.warmup:]
    q = statistics.quantiles(steady, n=100)
    log.info("[%s] total %.1f s | warm-up (first %d) %.1f s | steady p50 %.2f ms  p99 %.2f ms  max %.1f ms",
             tag, total, args.warmup, sum(lat[:args.warmup]) / 1e3, q[49], q[98], max(steady))
    return steady


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mode", choices=["eager", "compile", "both"], default="both")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.manual_seed(args.seed)

    dense_names = [c for cols in DENSE_STORES.values() for c in cols]
    model = CTRRanker(dense_names, SPARSE_FEATURES).eval()
    log.info("torch %s, ranker params %.1fM", torch.__version__, sum(p.numel() for p in model.parameters()) / 1e6)

    def make_stores():
        return [FeatureStore(n, c, seed=args.seed + i) for i, (n, c) in enumerate(DENSE_STORES.items())]

    res = {}
    if args.mode in ("eager", "both"):
        res["eager"] = replay(model, make_stores(), args, "eager")
    if args.mode in ("compile", "both"):
        res["compile"] = replay(torch.compile(model), make_stores(), args, "compile")
    if len(res) == 2:
        e, c = statistics.median(res["eager"]), statistics.median(res["compile"])
        log.info("steady-state median: eager %.2f ms, compiled %.2f ms (speedup %.2fx)", e, c, e / c)


if __name__ == "__main__":
    main()
