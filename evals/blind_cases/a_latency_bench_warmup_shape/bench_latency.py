"""Latency benchmark for the intent classifier before we flip torch.compile on in prod.

Simulates single-request serving: one query at a time, variable-length token ids
(no padding, the tokenizer output is sent as-is). Reports p50/p90/p99/max latency for
eager and compiled, after a warm-up phase.
"""
import argparse
import logging
import statistics
import time

import torch
import torch.nn as nn

log = logging.getLogger("bench")


class IntentClassifier(nn.Module):
    def __init__(self, vocab=8000, dim=128, heads=4, layers=3, num_intents=24, max_len=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_intents)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.tok(ids) + self.pos(pos)
        h = self.encoder(h)
        return self.head(self.norm(h.mean(dim=1)))


def make_traffic(n, vocab, min_len, max_len, seed):
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(min_len, max_len + 1, (n,), generator=g).tolist()
    return [torch.randint(0, vocab, (1, L), generator=g) for L in lens]


def percentile(xs, q):
    xs = sorted(xs)
    k = min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))
    return xs[k]


@torch.inference_mode()
def bench(model, requests, warmup_batch, warmup_iters, tag):
    for _ in range(warmup_iters):
        model(warmup_batch)
    lat = []
    for ids in requests:
        t0 = time.perf_counter()
        model(ids).argmax(-1)
        lat.append((time.perf_counter() - t0) * 1e3)
    stats = {
        "p50": percentile(lat, 50),
        "p90": percentile(lat, 90),
        "p99": percentile(lat, 99),
        "max": max(lat),
        "mean": statistics.fmean(lat),
    }
    log.info("%-8s " + " ".join(f"{k}={v:8.2f}ms" for k, v in stats.items()), tag)
    worst = sorted(range(len(lat)), key=lat.__getitem__, reverse=True)[:3]
    log.info("%-8s slowest requests: %s", tag,
             ", ".join(f"#{i} (len={requests[i].shape[1]}) {lat[i]:.1f}ms" for i in worst))
    return stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--min-len", type=int, default=8)
    p.add_argument("--max-len", type=int, default=96)
    p.add_argument("--warmup-iters", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--slo-p99-ms", type=float, default=50.0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(args.seed)
    model = IntentClassifier().eval()
    requests = make_traffic(args.requests, 8000, args.min_len, args.max_len, args.seed)
    # typical query length from last week's logs
    warmup_batch = torch.randint(0, 8000, (1, 32))

    eager = bench(model, requests, warmup_batch, args.warmup_iters, "eager")

    compiled_model = torch.compile(model)
    t0 = time.perf_counter()
    compiled = bench(compiled_model, requests, warmup_batch, args.warmup_iters, "compiled")
    log.info("compiled total wall (warm-up + timed): %.1fs", time.perf_counter() - t0)

    log.info("speedup p50: %.2fx  p99: %.2fx", eager["p50"] / compiled["p50"], eager["p99"] / compiled["p99"])
    if compiled["max"] > args.slo_p99_ms:
        log.warning("compiled model violates latency SLO (max %.1fms > %.1fms)", compiled["max"], args.slo_p99_ms)


if __name__ == "__main__":
    main()
