"""Pre-release check for the bearing-vibration health model.

Runs the feature extractor + classifier eagerly and compiled on the same recorded-like windows
and fails if the compiled path drifts from eager by more than the tolerance we ship with.

usage: python rms_gate.py [--windows 24] [--seconds 4] [--rate 51200] [--rtol 1e-6]
"""
import argparse
import logging
import sys
import time

import torch
import torch.nn as nn

log = logging.getLogger("rms_gate")


class BandFeatures(nn.Module):
    """Per-channel time-domain condition indicators over one long window."""

    def __init__(self, n_bands=8):
        super().__init__()
        self.n_bands = n_bands

    def forward(self, x):  # x: (batch, channels, samples), raw accelerometer counts in g
        mean = x.mean(dim=-1)
        ms = (x * x).mean(dim=-1)
        rms = ms.sqrt()
        b, c, n = x.shape
        bands = x.reshape(b, c, self.n_bands, n // self.n_bands)
        band_rms = (bands * bands).mean(dim=-1).sqrt()
        peak = x.abs().amax(dim=-1)
        crest = peak / rms
        return torch.cat([mean, rms, crest, band_rms.flatten(1)], dim=1)


class HealthModel(nn.Module):
    def __init__(self, channels=3, n_bands=8, hidden=64, classes=4):
        super().__init__()
        self.features = BandFeatures(n_bands)
        d = channels * (3 + n_bands)
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, classes))

    def forward(self, x):
        f = self.features(x)
        return f, self.mlp(self.norm(f))


def synth_windows(n, channels, samples, rate, seed=7):
    """Mounted accelerometer: 1 g gravity offset on z, shaft harmonics, bearing tones, noise."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(samples, dtype=torch.float64) / rate
    out = torch.empty(n, channels, samples, dtype=torch.float64)
    for i in range(n):
        shaft = 20 + 10 * torch.rand(1, generator=g).item()
        for ch in range(channels):
            sig = 0.02 * torch.sin(2 * torch.pi * shaft * t + ch)
            sig += 0.005 * torch.sin(2 * torch.pi * 7.3 * shaft * t)
            sig += 0.003 * torch.randn(samples, generator=g, dtype=torch.float64)
            offset = 1.0 if ch == 2 else 0.05 * ch
            out[i, ch] = sig + offset
    return out.float()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--windows", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--rate", type=int, default=51200)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--atol", type=float, default=0.0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    model = HealthModel().eval()
    compiled = torch.compile(model)
    samples = int(args.seconds * args.rate)
    data = synth_windows(args.windows, 3, samples, args.rate)
    log.info("torch %s, %d windows x %d samples", torch.__version__, args.windows, samples)

    worst_f, worst_l, bad = 0.0, 0.0, 0
    names = ["mean", "rms", "crest"]
    per_feat = torch.zeros(3 * (3 + 8))
    t0 = time.perf_counter()
    with torch.no_grad():
        for s in range(0, args.windows, args.batch):
            x = data[s:s + args.batch]
            f_e, y_e = model(x)
            f_c, y_c = compiled(x)
            rel = ((f_c - f_e).abs() / f_e.abs().clamp_min(1e-12))
            per_feat = torch.maximum(per_feat, rel.amax(dim=0))
            worst_f = max(worst_f, rel.max().item())
            worst_l = max(worst_l, (y_c - y_e).abs().max().item())
            if not torch.allclose(f_c, f_e, rtol=args.rtol, atol=args.atol):
                bad += 1
    log.info("checked in %.1fs", time.perf_counter() - t0)
    for k, name in enumerate(names):
        log.info("%-7s max rel diff per channel: %s", name,
                 " ".join(f"{v:.2e}" for v in per_feat[k * 3:(k + 1) * 3].tolist()))
    log.info("band_rms max rel diff: %.2e", per_feat[9:].max().item())
    log.info("worst feature rel diff %.3e, worst logit abs diff %.3e", worst_f, worst_l)
    if bad:
        log.error("PARITY FAILED: %d/%d batches outside rtol=%g atol=%g", bad,
                  (args.windows + args.batch - 1) // args.batch, args.rtol, args.atol)
        sys.exit(1)
    log.info("parity OK")


if __name__ == "__main__":
    main()
