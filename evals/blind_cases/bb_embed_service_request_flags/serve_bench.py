"""Replay a recorded mix of embedding requests against the compiled encoder and report latency.

    python serve_bench.py --requests 300
"""
import argparse
import json
import logging
import random
import statistics
import time

import torch

from encoder import SentenceEncoder, embed_batch

log = logging.getLogger("embed-svc")

OPTION_KEYS = ("cls_pooling", "center", "whiten", "normalize", "binarize")
DEFAULTS = {"cls_pooling": False, "center": False, "whiten": False, "normalize": True, "binarize": False}


def synthetic_traffic(n, seed, max_len, batch):
    """Mimics the production mix: most clients use the defaults, the rest set a few flags."""
    rng = random.Random(seed)
    for i in range(n):
        opts = dict(DEFAULTS)
        if rng.random() < 0.5:
            for k in OPTION_KEYS:
                if rng.random() < 0.3:
                    opts[k] = not opts[k]
        lengths = [rng.randint(4, max_len) for _ in range(batch)]
        yield {"id": i, "options": opts, "lengths": lengths}


def tokenize(req, vocab, max_len, gen):
    b = len(req["lengths"])
    ids = torch.randint(1, vocab, (b, max_len), generator=gen)
    mask = torch.arange(max_len)[None, :] < torch.tensor(req["lengths"])[:, None]
    return ids.masked_fill(~mask, 0), mask


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--max-len", type=int, default=32)
    p.add_argument("--slow-ms", type=float, default=250.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")

    torch.manual_seed(0)
    model = SentenceEncoder(max_len=args.max_len).eval()
    run = embed_batch if args.no_compile else torch.compile(embed_batch)
    gen = torch.Generator().manual_seed(args.seed)

    # warm-up with the default options so no client pays the compile
    t0 = time.perf_counter()
    with torch.inference_mode():
        for _ in range(3):
            ids, mask = tokenize({"lengths": [args.max_len] * args.batch}, 8000, args.max_len, gen)
            run(model, ids, mask, **DEFAULTS)
    log.info("warm-up done in %.1fs", time.perf_counter() - t0)

    lat, slow = [], []
    t_start = time.perf_counter()
    with torch.inference_mode():
        for req in synthetic_traffic(args.requests, args.seed, args.max_len, args.batch):
            ids, mask = tokenize(req, 8000, args.max_len, gen)
            t = time.perf_counter()
            emb = run(model, ids, mask, **req["options"])
            ms = (time.perf_counter() - t) * 1000
            lat.append(ms)
            if ms > args.slow_ms:
                slow.append((req["id"], round(ms), req["options"]))
                log.warning("slow request %d: %.0f ms options=%s", req["id"], ms, json.dumps(req["options"]))
            assert emb.shape == (args.batch, 128)
    wall = time.perf_counter() - t_start
    lat_sorted = sorted(lat)
    p50 = statistics.median(lat)
    p99 = lat_sorted[int(0.99 * (len(lat) - 1))]
    tail = lat[len(lat) // 2:]
    print(f"requests {len(lat)}  wall {wall:.1f}s  p50 {p50:.2f} ms  p99 {p99:.1f} ms  max {max(lat):.0f} ms")
    print(f"slow requests (> {args.slow_ms:.0f} ms): {len(slow)}; first at request {slow[0][0] if slow else None}, "
          f"last at request {slow[-1][0] if slow else None}")
    print(f"second half of the run: p50 {statistics.median(tail):.2f} ms  max {max(tail):.0f} ms")
    if slow:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
