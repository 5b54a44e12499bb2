"""Masked denoising autoencoder for multichannel vibration windows.

The masking ratio follows a cosine curriculum over the optimizer steps (hard ->
easy) and is applied inside the model so that eval just calls model(x).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("dae")


def make_windows(n, channels, length, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 1, length)
    freqs = torch.rand(n, channels, 1, generator=g) * 40 + 5
    phase = torch.rand(n, channels, 1, generator=g) * 6.28
    x = torch.sin(2 * math.pi * freqs * t + phase)
    return x + 0.05 * torch.randn(n, channels, length, generator=g)


class MaskedDAE(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv1d(channels, hidden, 7, padding=3), nn.GELU(),
            nn.Conv1d(hidden, hidden, 5, padding=2, stride=2), nn.GELU(),
            nn.Conv1d(hidden, hidden, 5, padding=2), nn.GELU())
        self.dec = nn.Sequential(
            nn.ConvTranspose1d(hidden, hidden, 4, stride=2, padding=1), nn.GELU(),
            nn.Conv1d(hidden, channels, 7, padding=3))

    def forward(self, x, mask_ratio=0.0):
        if self.training and mask_ratio > 0:
            keep = torch.bernoulli(torch.full_like(x[:, :1, :], 1.0 - mask_ratio))
            x = x * keep
        return self.dec(self.enc(x))


def mask_ratio_at(step, total, hi, lo):
    return lo + 0.5 * (hi - lo) * (1 + math.cos(math.pi * step / total))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--mask-hi", type=float, default=0.6)
    p.add_argument("--mask-lo", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--log-every", type=int, default=10)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)

    x_tr = make_windows(2048, 6, 256, seed=1)
    x_va = make_windows(256, 6, 256, seed=2)
    model = MaskedDAE(6, 64)
    fwd = model if args.no_compile else torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)

    t_start = time.perf_counter()
    t_last = t_start
    step_times = []
    for step in range(args.steps):
        t0 = time.perf_counter()
        idx = torch.randint(0, len(x_tr), (args.batch_size,))
        xb = x_tr[idx]
        ratio = mask_ratio_at(step, args.steps, args.mask_hi, args.mask_lo)
        recon = fwd(xb, ratio)
        loss = F.mse_loss(recon, xb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - t0)
        if (step + 1) % args.log_every == 0:
            log.info("step %d mask=%.3f loss=%.4f last-%d avg step %.3fs",
                     step + 1, ratio, loss.item(), args.log_every,
                     (time.perf_counter() - t_last) / args.log_every)
            t_last = time.perf_counter()
    model.eval()
    with torch.no_grad():
        va = F.mse_loss(fwd(x_va), x_va).item()
    tail = sorted(step_times[-20:])
    print(f"val_mse={va:.4f} total={time.perf_counter() - t_start:.1f}s "
          f"median step (last 20)={tail[len(tail) // 2] * 1000:.1f}ms")


if __name__ == "__main__":
    main()
