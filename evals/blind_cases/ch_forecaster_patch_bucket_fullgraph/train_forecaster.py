"""Patch-based load forecaster (PatchTST-style) for building energy data.

Context windows of different lengths come from different sites (hourly vs
15-minute meters), so the patch length is picked from the window length.
"""
import argparse
import bisect
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("forecaster")


class PatchEmbed(nn.Module):
    # window length edges -> patch length used for windows of at least that length
    LEN_EDGES = [0, 96, 192, 384]
    PATCH_LENS = [8, 12, 16, 24]

    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.ModuleDict({str(p): nn.Linear(p, dim) for p in self.PATCH_LENS})

    def patch_len_for(self, length):
        i = bisect.bisect_right(self.LEN_EDGES, length) - 1
        return self.PATCH_LENS[i]

    def forward(self, x):  # x: (B, L)
        p = self.patch_len_for(x.size(1))
        n = x.size(1) // p
        patches = x[:, -n * p:].reshape(x.size(0), n, p)
        return self.proj[str(p)](patches)


class Forecaster(nn.Module):
    def __init__(self, dim=64, heads=4, depth=2, horizon=24, max_patches=64):
        super().__init__()
        self.embed = PatchEmbed(dim)
        self.pos = nn.Parameter(torch.randn(1, max_patches, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(dim, horizon)

    def forward(self, x):
        mu = x.mean(dim=1, keepdim=True)
        sd = x.std(dim=1, keepdim=True) + 1e-5
        z = (x - mu) / sd
        h = self.embed(z)
        h = h + self.pos[:, : h.size(1)]
        h = self.encoder(h)
        y = self.head(h.mean(dim=1))
        return y * sd + mu


def make_batch(batch, length, horizon, gen):
    t = torch.arange(length + horizon, dtype=torch.float32)
    phase = torch.rand(batch, 1, generator=gen) * 6.28
    series = torch.sin(2 * torch.pi * t / 24 + phase) + 0.1 * torch.randn(batch, length + horizon, generator=gen)
    return series[:, :length], series[:, length:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--window", type=int, default=192)
    ap.add_argument("--fullgraph", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)

    model = Forecaster()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step_fn = model if args.no_compile else torch.compile(model, fullgraph=args.fullgraph)

    t_first = None
    t_start = time.perf_counter()
    for step in range(args.steps):
        x, y = make_batch(args.batch_size, args.window, 24, gen)
        t0 = time.perf_counter()
        loss = F.mse_loss(step_fn(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0:
            t_first = time.perf_counter() - t0
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f", step, loss.item())
    total = time.perf_counter() - t_start
    log.info("first step %.2f s, steady %.1f ms/step", t_first,
             1000 * (total - t_first) / max(1, args.steps - 1))


if __name__ == "__main__":
    main()
