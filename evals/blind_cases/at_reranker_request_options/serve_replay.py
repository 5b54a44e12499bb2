"""Replays a captured request log against the compiled reranker and reports latency.

usage: python serve_replay.py [--requests 40] [--candidates 32] [--no-compile]
"""
import argparse
import logging
import random
import statistics
import time

import torch

from options import parse_options
from reranker import CrossEncoder, rank

log = logging.getLogger("replay")
SEQ_LEN = 48


def fake_request(rng):
    """Same option mix as the production log: most clients send temperature, some a length penalty."""
    body = {"temperature": rng.choice([0.5, 0.7, 1.0])}
    if rng.random() < 0.3:
        body["length_penalty"] = 0.1
    if rng.random() < 0.2:
        body["top_k"] = 5
    return body


def encode(rng, n_cand):
    ids = torch.zeros(n_cand, SEQ_LEN, dtype=torch.long)
    segs = torch.zeros(n_cand, SEQ_LEN, dtype=torch.long)
    q_len = rng.randint(4, 12)
    query = torch.randint(5, 8000, (q_len,))
    cand_len = torch.zeros(n_cand, dtype=torch.long)
    for i in range(n_cand):
        c_len = rng.randint(8, SEQ_LEN - q_len - 3)
        ids[i, 0] = 1
        ids[i, 1:1 + q_len] = query
        ids[i, 1 + q_len] = 2
        ids[i, 2 + q_len:2 + q_len + c_len] = torch.randint(5, 8000, (c_len,))
        segs[i, 2 + q_len:2 + q_len + c_len] = 1
        cand_len[i] = c_len
    return ids, segs, cand_len


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--candidates", type=int, default=32)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    rng = random.Random(0)
    model = CrossEncoder().eval()
    ranker = rank if args.no_compile else torch.compile(rank)

    lat = []
    with torch.inference_mode():
        for r in range(args.requests):
            opts = parse_options(fake_request(rng))
            ids, segs, cand_len = encode(rng, args.candidates)
            t0 = time.perf_counter()
            scores, order = ranker(model, ids, segs, cand_len, opts)
            dt = (time.perf_counter() - t0) * 1e3
            lat.append(dt)
            log.info("req %02d T=%.1f lp=%.1f k=%d -> top=%d p=%.3f  %.1f ms",
                     r, opts.temperature, opts.length_penalty, opts.top_k,
                     order[0].item(), scores[0].item(), dt)

    steady = lat[len(lat) // 2:]
    log.info("mode=%s  first request %.0f ms | median of 2nd half %.2f ms | max of 2nd half %.1f ms | total %.1f s",
             "eager" if args.no_compile else "compiled", lat[0], statistics.median(steady), max(steady),
             sum(lat) / 1e3)


if __name__ == "__main__":
    main()
