"""Masked-patch pretraining for multichannel sensor windows (PatchTST-style).

  python pretrain.py --steps 30
  python pretrain.py --steps 30 --fullgraph
"""
import argparse
import copy
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("mae")


class RevIN(nn.Module):
    def __init__(self, channels, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(1, channels, 1))
        self.beta = nn.Parameter(torch.zeros(1, channels, 1))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        sd = (x.var(-1, keepdim=True, unbiased=False) + self.eps).sqrt()
        return (x - mu) / sd * self.gamma + self.beta


class MaskedPatchModel(nn.Module):
    def __init__(self, channels=7, seq_len=336, patch=16, dim=128, depth=3, heads=4, mask_ratio=0.4):
        super().__init__()
        assert seq_len % patch == 0
        self.patch, self.n_patch, self.mask_ratio = patch, seq_len // patch, mask_ratio
        self.norm = RevIN(channels)
        self.embed = nn.Linear(patch, dim)
        self.pos = nn.Parameter(torch.randn(1, self.n_patch, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, patch)

    def forward(self, series):
        b, c, _ = series.shape
        x = self.norm(series)
        patches = x.reshape(b, c, self.n_patch, self.patch)
        target = copy.deepcopy(patches.detach())
        mask = torch.rand(b, c, self.n_patch, device=series.device) < self.mask_ratio
        patches.masked_fill_(mask.unsqueeze(-1), 0.0)
        tokens = self.embed(patches).reshape(b * c, self.n_patch, -1) + self.pos
        recon = self.head(self.encoder(tokens)).reshape(b, c, self.n_patch, self.patch)
        err = (recon - target).pow(2).mean(-1)
        return (err * mask).sum() / mask.sum().clamp_min(1)


def synthetic_windows(n, channels, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(seq_len).float()
    freq = torch.rand(n, channels, 1, generator=g) * 0.2 + 0.01
    phase = torch.rand(n, channels, 1, generator=g) * 2 * math.pi
    level = torch.randn(n, channels, 1, generator=g) * 5
    return level + torch.sin(freq * t + phase) + 0.1 * torch.randn(n, channels, seq_len, generator=g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--fullgraph", action="store_true")
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    model = MaskedPatchModel()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    data = synthetic_windows(args.batch * 8, 7, 336, args.seed)
    step_fn = model if args.eager else torch.compile(model, fullgraph=args.fullgraph)
    log.info("torch %s | %s | params %.2fM", torch.__version__,
             "eager" if args.eager else f"compiled(fullgraph={args.fullgraph})",
             sum(p.numel() for p in model.parameters()) / 1e6)

    times = []
    model.train()
    for step in range(args.steps):
        i = (step * args.batch) % len(data)
        batch = data[i:i + args.batch]
        t0 = time.perf_counter()
        loss = step_fn(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %3d | loss %.4f | %.1f ms", step, loss.item(), times[-1] * 1e3)
    steady = sorted(times[5:])
    log.info("median step after warm-up: %.1f ms", steady[len(steady) // 2] * 1e3)


if __name__ == "__main__":
    main()
