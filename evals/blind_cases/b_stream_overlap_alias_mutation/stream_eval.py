"""Streaming evaluation of the denoiser on synthetic log-mel streams.

Runs the model chunk by chunk over a rolling feature buffer (as the device
firmware does) and compares with the offline eager run.
"""
import argparse
import logging
import time

import torch

from model import StreamingDenoiser

log = logging.getLogger("stream_eval")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--hop", type=int, default=8)
    p.add_argument("--window", type=int, default=32)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--backend", default="inductor")
    p.add_argument("--warmup", type=int, default=2, help="warm-up calls before streaming")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--atol", type=float, default=1e-4)
    return p.parse_args()


def make_stream(batch, channels, frames, seed):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(frames, batch, channels, generator=g)
    return base.cumsum(0) / frames ** 0.5


def run_stream(step_fn, stream, hop, window):
    """Push `hop` frames at a time into a rolling buffer and denoise the newest chunk."""
    T, B, C = stream.shape
    buf = torch.zeros(window, B, C)
    outs = []
    for t in range(0, T - hop + 1, hop):
        buf = torch.roll(buf, shifts=-hop, dims=0)
        buf[-hop:] = stream[t:t + hop]
        chunk = buf[-hop:]
        lookback = buf[-window:]
        outs.append(step_fn(chunk, lookback).clone())
    return torch.cat(outs, dim=0)


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    model = StreamingDenoiser(channels=args.channels).eval()
    stream = make_stream(args.batch, args.channels, args.hop * args.steps, args.seed)

    with torch.no_grad():
        ref = run_stream(model, stream, args.hop, args.window)

        step_fn = model
        if args.compile:
            step_fn = torch.compile(model, backend=args.backend)
            log.info("warming up compiled model (%d calls)", args.warmup)
            t0 = time.perf_counter()
            for _ in range(args.warmup):
                step_fn(torch.randn(args.hop, args.batch, args.channels),
                        torch.randn(args.window, args.batch, args.channels))
            log.info("warm-up done in %.1fs", time.perf_counter() - t0)

        t0 = time.perf_counter()
        out = run_stream(step_fn, stream, args.hop, args.window)
        dt = time.perf_counter() - t0

    err = (out - ref).abs()
    per_chunk = err.reshape(-1, args.hop, args.batch, args.channels).amax(dim=(1, 2, 3))
    log.info("streamed %d chunks in %.3fs", per_chunk.numel(), dt)
    log.info("max abs diff vs offline eager: %.3e (mean %.3e)", err.max().item(), err.mean().item())
    log.info("first chunks max diff: %s", [round(v, 5) for v in per_chunk[:6].tolist()])
    if err.max().item() > args.atol:
        log.error("PARITY FAILED (atol=%g)", args.atol)
        raise SystemExit(1)
    log.info("PARITY OK")


if __name__ == "__main__":
    main()
