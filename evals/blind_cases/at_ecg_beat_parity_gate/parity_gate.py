"""CI gate: torch.compile'd BeatNet must match eager BeatNet on the frozen validation slice.

Run in CI before we switch the bedside-monitor scorer to the compiled model.
"""
import argparse
import logging
import sys
import time

import torch

from beatnet import BeatNet

log = logging.getLogger("parity_gate")


def synthetic_val_slice(n, seed):
    """Stand-in for the frozen MIT-BIH validation slice (same shapes/statistics)."""
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(-1, 1, 256)
    qrs = torch.exp(-(t / 0.04) ** 2)
    twave = 0.3 * torch.exp(-((t - 0.35) / 0.1) ** 2)
    base = (qrs + twave).expand(n, 2, 256)
    beats = base * (0.8 + 0.4 * torch.rand(n, 2, 1, generator=g)) + 0.05 * torch.randn(n, 2, 256, generator=g)
    rr = 0.8 + 0.15 * torch.randn(n, 2, generator=g)
    return beats, rr


def build_model(ckpt_seed):
    torch.manual_seed(ckpt_seed)
    model = BeatNet()
    # pretend-load: give BatchNorm realistic running stats
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm1d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.8, 1.2)
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    model = build_model(ckpt_seed=7)
    compiled = torch.compile(model)
    beats, rr = synthetic_val_slice(args.n, seed=99)

    worst = 0.0
    mismatched_preds = 0
    eager_repeat_diff = 0.0
    t0 = time.time()
    with torch.no_grad():
        for i in range(0, args.n, args.batch_size):
            xb, rb = beats[i:i + args.batch_size], rr[i:i + args.batch_size]
            # seed identically before every forward so both paths see the same RNG state
            torch.manual_seed(args.seed)
            ref = model(xb, rb)
            torch.manual_seed(args.seed)
            ref2 = model(xb, rb)
            torch.manual_seed(args.seed)
            out = compiled(xb, rb)
            eager_repeat_diff = max(eager_repeat_diff, (ref - ref2).abs().max().item())
            diff = (ref - out).abs().max().item()
            worst = max(worst, diff)
            mismatched_preds += (ref.argmax(-1) != out.argmax(-1)).sum().item()
            log.info("batch %d: max|eager-compiled|=%.3e", i // args.batch_size, diff)
    log.info("eager run-to-run max diff: %.3e", eager_repeat_diff)
    log.info("worst max|eager-compiled|=%.3e, argmax disagreements %d/%d (%.1fs)",
             worst, mismatched_preds, args.n, time.time() - t0)

    ok = worst <= args.atol + args.rtol * 10.0
    if not ok:
        log.error("PARITY GATE FAILED (atol=%g rtol=%g)", args.atol, args.rtol)
        return 1
    log.info("PARITY GATE PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
