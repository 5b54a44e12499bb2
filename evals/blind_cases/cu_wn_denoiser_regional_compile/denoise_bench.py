"""Benchmark the dilated-conv speech denoiser with regional compilation.

We compile each residual block separately (the blocks are identical, so the
compiled code should be shared and startup stays short), then time a
streaming-style inference loop against eager.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

log = logging.getLogger("denoise_bench")


class ResidualBlock(nn.Module):
    def __init__(self, channels: int, dilation: int, kernel_size: int = 3):
        super().__init__()
        pad = dilation * (kernel_size - 1) // 2
        self.conv = weight_norm(
            nn.Conv1d(channels, 2 * channels, kernel_size, padding=pad, dilation=dilation)
        )
        self.proj = weight_norm(nn.Conv1d(channels, channels, 1))
        self.norm = nn.GroupNorm(1, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.conv(self.norm(x))
        a, b = h.chunk(2, dim=1)
        h = torch.tanh(a) * torch.sigmoid(b)
        return x + self.proj(h)


class Denoiser(nn.Module):
    def __init__(self, channels: int = 32, n_blocks: int = 16, cycle: int = 4):
        super().__init__()
        self.inp = weight_norm(nn.Conv1d(1, channels, 7, padding=3))
        self.blocks = nn.ModuleList(
            [ResidualBlock(channels, 2 ** (i % cycle)) for i in range(n_blocks)]
        )
        self.out = weight_norm(nn.Conv1d(channels, 1, 7, padding=3))

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        x = F.leaky_relu(self.inp(wav), 0.1)
        for blk in self.blocks:
            x = blk(x)
        return torch.tanh(self.out(x)) + wav

    def compile_blocks(self, **kwargs):
        for blk in self.blocks:
            blk.compile(**kwargs)


def make_batch(batch: int, samples: int, gen: torch.Generator) -> torch.Tensor:
    t = torch.arange(samples, dtype=torch.float32) / 16000.0
    freqs = 100.0 + 300.0 * torch.rand(batch, 1, 1, generator=gen)
    clean = 0.5 * torch.sin(2 * torch.pi * freqs * t)
    noise = 0.1 * torch.randn(batch, 1, samples, generator=gen)
    return clean + noise


@torch.no_grad()
def run(model: nn.Module, batches, warmup: int = 2):
    for b in batches[:warmup]:
        model(b)
    t0 = time.perf_counter()
    outs = [model(b) for b in batches]
    dt = (time.perf_counter() - t0) / len(batches)
    return outs, dt


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--blocks", type=int, default=16)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--samples", type=int, default=2000)
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    batches = [make_batch(args.batch, args.samples, gen) for _ in range(args.iters)]

    eager = Denoiser(args.channels, args.blocks).eval()
    compiled = Denoiser(args.channels, args.blocks).eval()
    compiled.load_state_dict(eager.state_dict())

    ref, t_eager = run(eager, batches)
    log.info("eager:    %.2f ms/batch", 1e3 * t_eager)

    t0 = time.perf_counter()
    compiled.compile_blocks()
    with torch.no_grad():
        compiled(batches[0])
    log.info("compile + first call: %.1f s", time.perf_counter() - t0)

    out, t_comp = run(compiled, batches)
    log.info("compiled: %.2f ms/batch (speedup %.2fx)", 1e3 * t_comp, t_eager / t_comp)

    err = max((a - b).abs().max().item() for a, b in zip(ref, out))
    log.info("max |eager - compiled| = %.2e", err)
    snr_in = 10 * torch.log10(batches[0].pow(2).mean() / 0.01).item()
    log.info("input SNR ~ %.1f dB, blocks=%d, channels=%d", snr_in, args.blocks, args.channels)


if __name__ == "__main__":
    main()
