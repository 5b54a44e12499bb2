"""Latency benchmark for the session-encoder serving path: eager vs torch.compile."""
import argparse
import statistics
import time

import torch

from session_model import SessionEncoder


def make_requests(n_batches, batch_size, max_len, n_items, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(max_len // 2, max_len + 1, (batch_size,), generator=g)
        lengths[0] = max_len  # the router always fills one slot with a long session
        items = torch.randint(1, n_items, (batch_size, max_len), generator=g)
        gaps = torch.rand(batch_size, max_len, generator=g) * 30.0
        timestamps = gaps.cumsum(1)
        pad = torch.arange(max_len)[None, :] >= lengths[:, None]
        items = items.masked_fill(pad, 0)
        timestamps = timestamps.masked_fill(pad, 0.0)
        batches.append((items, timestamps, lengths))
    return batches


def bench(fn, batches, warmup, iters):
    with torch.inference_mode():
        for i in range(warmup):
            fn(*batches[i % len(batches)])
        times = []
        for i in range(iters):
            b = batches[i % len(batches)]
            t0 = time.perf_counter()
            fn(*b)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--max-len", type=int, default=256)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    args = p.parse_args()

    torch.manual_seed(0)
    model = SessionEncoder(max_len=args.max_len).eval()
    batches = make_requests(8, args.batch_size, args.max_len, n_items=20000)

    compiled = torch.compile(model)

    t0 = time.perf_counter()
    with torch.inference_mode():
        ref = model(*batches[0])
        out = compiled(*batches[0])
    print(f"first compiled call (incl. compile): {time.perf_counter() - t0:.1f}s")
    print(f"max |compiled - eager| = {(out - ref).abs().max().item():.2e}")

    eager_ms = bench(model, batches, args.warmup, args.iters)
    compiled_ms = bench(compiled, batches, args.warmup, args.iters)
    print(f"eager    p50: {eager_ms:7.1f} ms/batch")
    print(f"compiled p50: {compiled_ms:7.1f} ms/batch")
    print(f"speedup: {eager_ms / compiled_ms:.2f}x")


if __name__ == "__main__":
    main()
