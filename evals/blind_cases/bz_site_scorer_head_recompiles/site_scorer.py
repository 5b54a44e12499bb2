"""Vibration anomaly scoring service (replay harness).

One shared 1-D conv encoder for all pump sites, plus a small calibration head per
site (each site has its own sensor mounting, so the heads are fine-tuned per site).
Requests arrive as (site_id, window) pairs; we replay a recorded request log and
report per-site latency.
"""
import argparse
import logging
import time
from collections import defaultdict

import torch
import torch.nn as nn

log = logging.getLogger("site_scorer")


class ConvBlock(nn.Module):
    def __init__(self, ch, k=5, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(ch, ch, k, padding=dilation * (k - 1) // 2, dilation=dilation)
        self.norm = nn.GroupNorm(1, ch)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.norm(self.conv(x)))


class SharedEncoder(nn.Module):
    def __init__(self, in_ch=3, ch=48, depth=4):
        super().__init__()
        self.stem = nn.Conv1d(in_ch, ch, 7, padding=3)
        self.blocks = nn.Sequential(*[ConvBlock(ch, dilation=2 ** i) for i in range(depth)])
        self.proj = nn.Linear(2 * ch, ch)

    def forward(self, x):
        h = self.blocks(self.stem(x))
        pooled = torch.cat([h.mean(-1), h.amax(-1)], dim=-1)
        return torch.tanh(self.proj(pooled))


class SiteHead(nn.Module):
    def __init__(self, ch=48, n_states=4):
        super().__init__()
        self.fc = nn.Linear(ch, n_states)
        self.log_temp = nn.Parameter(torch.zeros(()))

    def forward(self, z):
        return self.fc(z) / self.log_temp.exp()


class PumpScorer(nn.Module):
    def __init__(self, n_sites, ch=48):
        super().__init__()
        self.encoder = SharedEncoder(ch=ch)
        self.heads = nn.ModuleList(SiteHead(ch) for _ in range(n_sites))

    def forward(self, window, site_id: int):
        z = self.encoder(window)
        logits = self.heads[site_id](z)
        probs = logits.softmax(-1)
        # anomaly score = 1 - P(normal state)
        return 1.0 - probs[:, 0], probs


def make_request_log(n_sites, per_site, batch, length, seed):
    g = torch.Generator().manual_seed(seed)
    reqs = []
    for _ in range(per_site):
        for site in torch.randperm(n_sites, generator=g).tolist():
            reqs.append((site, torch.randn(batch, 3, length, generator=g)))
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sites", type=int, default=16)
    ap.add_argument("--per-site", type=int, default=3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=1024)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(args.seed)
    model = PumpScorer(args.sites).eval()
    scorer = torch.compile(model) if args.compile else model

    reqs = make_request_log(args.sites, args.per_site, args.batch, args.length, args.seed)
    first_seen = {}
    steady = defaultdict(list)
    t_start = time.perf_counter()
    with torch.inference_mode():
        for site, window in reqs:
            t0 = time.perf_counter()
            score, _ = scorer(window, site)
            dt = (time.perf_counter() - t0) * 1e3
            if site not in first_seen:
                first_seen[site] = dt
            else:
                steady[site].append(dt)
    total = time.perf_counter() - t_start

    log.info("replayed %d requests in %.1f s (compile=%s)", len(reqs), total, args.compile)
    print(f"{'site':>4} {'first_ms':>9} {'steady_ms':>10}")
    for site in range(args.sites):
        st = sum(steady[site]) / max(len(steady[site]), 1)
        print(f"{site:>4} {first_seen[site]:>9.1f} {st:>10.2f}")
    fast = [sum(v) / len(v) for v in steady.values()]
    print(f"steady latency: min {min(fast):.2f} ms  max {max(fast):.2f} ms")


if __name__ == "__main__":
    main()
