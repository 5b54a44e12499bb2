"""Evaluate the sensor forecaster on a held-out window, optionally with torch.compile.

    python evaluate.py --compile --check-parity
"""
import argparse
import logging
import time

import torch

from tsmodel import NS_PER_SEC, SensorForecaster

log = logging.getLogger("evaluate")

# 2024-03-04 06:00:00 UTC
EPOCH_START_NS = 1_709_532_000 * NS_PER_SEC


def make_split(n_series: int, length: int, n_sensors: int, seed: int):
    """Synthetic stand-in for the historian export: daily + hourly cycles plus noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(length, dtype=torch.float64)
    phase = torch.rand(n_series, 1, n_sensors, generator=g, dtype=torch.float64) * 6.28
    daily = torch.sin(2 * torch.pi * t[None, :, None] / 86400 + phase)
    hourly = 0.3 * torch.sin(2 * torch.pi * t[None, :, None] / 3600 + 2 * phase)
    noise = 0.05 * torch.randn(n_series, length, n_sensors, generator=g, dtype=torch.float64)
    values = (daily + hourly + noise).float()
    start = EPOCH_START_NS + torch.randint(0, 7 * 86400, (n_series,), generator=g) * NS_PER_SEC
    ts = start[:, None] + torch.arange(length)[None, :] * NS_PER_SEC
    return values, ts


def windows(values, ts, context: int, horizon: int, stride: int, batch_size: int):
    xs, last, ys, yts = [], [], [], []
    for s in range(values.shape[0]):
        for i in range(0, values.shape[1] - context - horizon + 1, stride):
            xs.append(values[s, i:i + context])
            last.append(ts[s, i + context - 1])
            ys.append(values[s, i + context:i + context + horizon])
            yts.append(ts[s, i + context:i + context + horizon])
    xs, last, ys, yts = torch.stack(xs), torch.stack(last), torch.stack(ys), torch.stack(yts)
    for i in range(0, len(xs) - batch_size + 1, batch_size):
        sl = slice(i, i + batch_size)
        yield xs[sl], last[sl], ys[sl], yts[sl]


@torch.no_grad()
def run_eval(model, batches):
    abs_err, sq_err, n = 0.0, 0.0, 0
    per_step = None
    for x, last_ts, y, y_ts in batches:
        pred, pred_ts = model(x, last_ts)
        if not torch.equal(pred_ts, y_ts):
            n_bad = (pred_ts != y_ts).sum().item()
            log.warning("forecast timestamps do not line up with targets (%d mismatched)", n_bad)
        err = pred - y
        abs_err += err.abs().sum().item()
        sq_err += err.pow(2).sum().item()
        n += err.numel()
        step_mae = err.abs().mean(dim=(0, 2))
        per_step = step_mae if per_step is None else per_step + step_mae
    return abs_err / n, (sq_err / n) ** 0.5, per_step


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--context", type=int, default=96)
    p.add_argument("--horizon", type=int, default=32)
    p.add_argument("--sensors", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--series", type=int, default=4)
    p.add_argument("--length", type=int, default=1200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--check-parity", action="store_true",
                   help="also run the eager model on the first batch and compare")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = SensorForecaster(args.sensors, args.horizon).eval()
    if args.checkpoint:
        model.load_state_dict(torch.load(args.checkpoint, map_location="cpu"))
    values, ts = make_split(args.series, args.length, args.sensors, seed=args.seed + 1)
    log.info("eval windows from %d series x %d samples", args.series, args.length)

    fwd = torch.compile(model) if args.compile else model
    batches = list(windows(values, ts, args.context, args.horizon, stride=48,
                           batch_size=args.batch_size))

    if args.check_parity:
        x, last_ts, _, _ = batches[0]
        with torch.no_grad():
            ref, ref_ts = model(x, last_ts)
            out, out_ts = fwd(x, last_ts)
        diff = (out - ref).abs()
        log.info("parity: max abs diff %.3e", diff.max().item())
        bad_steps = (diff.amax(dim=(0, 2)) > 1e-4).nonzero().flatten().tolist()
        if bad_steps:
            log.error("compiled output differs from eager at horizon steps %s", bad_steps)
        torch.testing.assert_close(out_ts, ref_ts)
        torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)

    t0 = time.perf_counter()
    mae, rmse, per_step = run_eval(fwd, batches)
    log.info("eval done in %.1fs over %d batches", time.perf_counter() - t0, len(batches))
    log.info("MAE %.4f  RMSE %.4f", mae, rmse)
    log.info("per-step MAE (first 8): %s",
             " ".join(f"{v:.3f}" for v in (per_step / len(batches))[:8].tolist()))


if __name__ == "__main__":
    main()
