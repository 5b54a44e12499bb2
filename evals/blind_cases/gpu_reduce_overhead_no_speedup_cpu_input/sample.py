"""DDPM-style sampler for a small latent denoiser (timestep-conditioned MLP-mixer),
benchmarking torch.compile modes.

    python sample.py --mode default
    python sample.py --mode reduce-overhead      # expected to be much faster: 1000 tiny steps
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("sample")


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=-1)


class Denoiser(nn.Module):
    def __init__(self, tokens=64, d=128, depth=4):
        super().__init__()
        self.d = d
        self.t_mlp = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList(
            nn.ModuleDict(dict(ln1=nn.LayerNorm(d), tok=nn.Linear(tokens, tokens),
                               ln2=nn.LayerNorm(d), ch=nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(),
                                                                     nn.Linear(2 * d, d))))
            for _ in range(depth))
        self.out = nn.Linear(d, d)

    def forward(self, x, t):
        device = x.device
        temb = self.t_mlp(timestep_embedding(t.to(device), self.d))[:, None, :]
        h = x + temb
        for b in self.blocks:
            h = h + b["tok"](b["ln1"](h).transpose(1, 2)).transpose(1, 2)
            h = h + b["ch"](b["ln2"](h))
        return self.out(h)


class DDPMScheduler:
    def __init__(self, steps=1000):
        self.betas = torch.linspace(1e-4, 0.02, steps)
        self.alphas = 1 - self.betas
        self.abar = torch.cumprod(self.alphas, 0)
        self.timesteps = torch.arange(steps - 1, -1, -1)      # lives on CPU, like diffusers

    def step(self, eps, t, x):
        a, ab, b = self.alphas[t].item(), self.abar[t].item(), self.betas[t].item()
        mean = (x - b / math.sqrt(1 - ab) * eps) / math.sqrt(a)
        return mean + (math.sqrt(b) * torch.randn_like(x) if t > 0 else 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="reduce-overhead",
                   choices=["default", "reduce-overhead", "max-autotune-no-cudagraphs", "eager"])
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    model = Denoiser().to(args.device).eval()
    net = model if args.mode == "eager" else torch.compile(model, mode=args.mode)
    sched = DDPMScheduler(args.steps)

    def sample():
        x = torch.randn(args.batch, 64, 128, device=args.device)
        for t in sched.timesteps:
            t_batch = t.repeat(args.batch)                 # (B,) timestep per sample
            eps = net(x, t_batch)
            x = sched.step(eps, int(t), x)
        return x

    with torch.inference_mode():
        sample()                                           # warm-up / compile
        if args.device == "cuda":
            torch.cuda.synchronize()
        t0 = time.time()
        x = sample()
        if args.device == "cuda":
            torch.cuda.synchronize()
    dt = time.time() - t0
    log.info("mode=%s: %d denoising steps in %.2fs (%.2f ms/step), sample std %.3f",
             args.mode, args.steps, dt, 1e3 * dt / args.steps, x.std().item())


if __name__ == "__main__":
    main()
