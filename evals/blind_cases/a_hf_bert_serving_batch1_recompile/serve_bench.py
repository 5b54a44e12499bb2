"""Replay a request trace through the compiled intent classifier and report latency.

python serve_bench.py --requests 60 --max-batch 8 --compile
"""
import argparse
import logging
import random
import statistics
import time

import torch
from transformers import BertConfig, BertForSequenceClassification

log = logging.getLogger("serve_bench")

PAD_ID = 0


def build_model(num_labels):
    # same architecture as the production checkpoint, scaled down for the bench box
    cfg = BertConfig(
        vocab_size=8000,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=512,
        max_position_embeddings=256,
        num_labels=num_labels,
        pad_token_id=PAD_ID,
    )
    return BertForSequenceClassification(cfg).eval()


def request_trace(n, seed):
    rng = random.Random(seed)
    return [[rng.randrange(1, 8000) for _ in range(rng.randint(8, 60))] for _ in range(n)]


def collate(requests):
    max_len = max(len(r) for r in requests)
    ids = torch.full((len(requests), max_len), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(requests), max_len), dtype=torch.long)
    for i, r in enumerate(requests):
        ids[i, : len(r)] = torch.tensor(r)
        mask[i, : len(r)] = 1
    # batch and sequence length change on every call; keep one graph for all of them
    for t in (ids, mask):
        torch._dynamo.mark_dynamic(t, 0)
        torch._dynamo.mark_dynamic(t, 1)
    return ids, mask


def micro_batches(trace, max_batch, seed):
    """Group the trace the way the dynamic batcher does: whatever is queued, up to max_batch."""
    rng = random.Random(seed + 1)
    i = 0
    while i < len(trace):
        n = min(rng.choice([1, 3, 4, 6, 8, 8, 8]), max_batch, len(trace) - i)
        yield trace[i : i + n]
        i += n


@torch.no_grad()
def run(model, ids, mask):
    return model(input_ids=ids, attention_mask=mask).logits.argmax(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--max-batch", type=int, default=8)
    ap.add_argument("--num-labels", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--slo-ms", type=float, default=250.0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = build_model(args.num_labels)
    fwd = torch.compile(model) if args.compile else model

    # warm-up: compile once at the largest batch before taking traffic
    t0 = time.perf_counter()
    warm = request_trace(args.max_batch, seed=123)
    run(fwd, *collate(warm))
    log.info("warm-up done in %.1fs", time.perf_counter() - t0)

    trace = request_trace(args.requests, args.seed)
    lat, over_slo = [], []
    for step, reqs in enumerate(micro_batches(trace, args.max_batch, args.seed)):
        ids, mask = collate(reqs)
        t = time.perf_counter()
        run(fwd, ids, mask)
        ms = (time.perf_counter() - t) * 1e3
        lat.append(ms)
        if ms > args.slo_ms:
            over_slo.append((step, tuple(ids.shape), ms))
            log.warning("step %d batch=%s took %.0f ms (SLO %.0f ms)", step, tuple(ids.shape), ms, args.slo_ms)

    lat_sorted = sorted(lat)
    p99 = lat_sorted[min(len(lat_sorted) - 1, int(0.99 * len(lat_sorted)))]
    log.info(
        "batches=%d p50=%.1fms p99=%.1fms max=%.1fms over_slo=%d",
        len(lat), statistics.median(lat), p99, max(lat), len(over_slo),
    )


if __name__ == "__main__":
    main()
