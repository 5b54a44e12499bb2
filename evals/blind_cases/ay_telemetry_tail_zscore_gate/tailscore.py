"""Telemetry anomaly scorer: per-channel ECDF -> Gaussian tail z-scores -> alert score.

Fits an empirical CDF per sensor channel on a reference window, then scores new
windows by mapping each reading to its upper-tail probability and converting it
to a one-sided z-score. The compiled scorer must match the eager scorer before a
release is cut (see --gate).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn

log = logging.getLogger("tailscore")

SQRT2 = math.sqrt(2.0)


def make_telemetry(n_rows, n_channels, seed, anomaly_frac=0.02):
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(n_rows, n_channels, generator=g)
    # heavy right tail on a few channels (vibration / current spikes)
    spikes = torch.distributions.Exponential(torch.tensor(0.6)).sample((n_rows, n_channels))
    x = base + 0.3 * spikes
    n_anom = int(anomaly_frac * n_rows)
    idx = torch.randperm(n_rows, generator=g)[:n_anom]
    x[idx] += 4.0 + 3.0 * torch.rand(n_anom, n_channels, generator=g)
    return x


class TailScorer(nn.Module):
    def __init__(self, reference, n_knots=4097, floor=2.0 ** -24):
        super().__init__()
        qs = torch.linspace(0.0, 1.0, n_knots, dtype=torch.float64)
        knots = torch.quantile(reference.double(), qs, dim=0).T.contiguous()  # (C, K)
        self.register_buffer("knots", knots.float())
        self.register_buffer("levels", qs.float())
        self.floor = floor
        self.n_ref = reference.shape[0]

    def cdf(self, x):
        # piecewise-linear ECDF per channel, x: (B, C)
        k = self.knots
        idx = torch.searchsorted(k, x.T.contiguous()).clamp(1, k.shape[1] - 1)  # (C, B)
        lo = torch.gather(k, 1, idx - 1)
        hi = torch.gather(k, 1, idx)
        w = ((x.T - lo) / (hi - lo).clamp_min(1e-12)).clamp(0.0, 1.0)
        u = self.levels[idx - 1] + w * (self.levels[idx] - self.levels[idx - 1])
        # readings beyond the reference max get an exponential-tail extrapolation
        beyond = (x.T - k[:, -1:]).clamp_min(0.0)
        tail = 1.0 / (self.n_ref + 1) * torch.exp(-beyond)
        u = torch.where(beyond > 0, 1.0 - tail, u * (1.0 - 1.0 / (self.n_ref + 1)))
        return u.T

    def forward(self, x):
        u = self.cdf(x)
        u = u.clamp(0.5, 1.0 - self.floor)           # one-sided: only exceedances count
        z = SQRT2 * torch.erfinv(2.0 * u - 1.0)       # upper-tail z-score per channel
        score = z.pow(2).sum(dim=1)                   # chi-square-like alert score
        return z, score


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--channels", type=int, default=48)
    ap.add_argument("--ref-rows", type=int, default=200_000)
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--gate", action="store_true", help="compare compiled vs eager and fail on mismatch")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    ref = make_telemetry(args.ref_rows, args.channels, args.seed)
    live = make_telemetry(args.rows, args.channels, args.seed + 1, anomaly_frac=0.05)
    scorer = TailScorer(ref).eval()
    compiled = torch.compile(scorer)
    log.info("reference rows=%d channels=%d, live rows=%d", args.ref_rows, args.channels, args.rows)

    z_e, s_e, z_c, s_c = [], [], [], []
    t0 = time.perf_counter()
    with torch.no_grad():
        for i in range(0, args.rows, args.batch):
            xb = live[i:i + args.batch]
            ze, se = scorer(xb)
            zc, sc = compiled(xb)
            z_e.append(ze); s_e.append(se); z_c.append(zc); s_c.append(sc)
    z_e, s_e, z_c, s_c = map(torch.cat, (z_e, s_e, z_c, s_c))
    log.info("scored %d rows in %.1fs", args.rows, time.perf_counter() - t0)

    thr = torch.quantile(s_e, 0.95).item()
    alerts_e = int((s_e > thr).sum()); alerts_c = int((s_c > thr).sum())
    log.info("alert threshold %.3f  alerts eager=%d compiled=%d", thr, alerts_e, alerts_c)
    log.info("max z eager=%.6f compiled=%.6f", z_e.max().item(), z_c.max().item())

    if args.gate:
        dz = (z_e - z_c).abs()
        ds = (s_e - s_c).abs()
        bad = dz > args.atol + args.rtol * z_e.abs()
        print(f"gate: z max|diff|={dz.max().item():.3e} score max|diff|={ds.max().item():.3e} "
              f"mismatched z={int(bad.sum())}/{bad.numel()}")
        if bad.any():
            r, c = divmod(int(dz.argmax()), z_e.shape[1])
            print(f"gate: worst row={r} ch={c} eager={z_e[r, c].item():.7f} compiled={z_c[r, c].item():.7f}")
            print("PARITY GATE FAILED")
            raise SystemExit(1)
        print("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
