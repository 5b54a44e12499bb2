"""Toy DDPM on 2-D point clouds (two moons + ring), CPU training.

Sampling noise and timesteps from a dedicated torch.Generator so that a run is
reproducible independent of whatever else touches the global RNG (data
augmentation, dropout, eval sampling).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ddpm")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--timesteps", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def make_data(n, g):
    t = torch.rand(n // 2, generator=g) * math.pi
    moons = torch.stack([torch.cos(t), torch.sin(t)], 1)
    moons = torch.cat([moons, torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1)])
    moons = moons + 0.05 * torch.randn(moons.shape, generator=g)
    return (moons - moons.mean(0)) / moons.std(0)


def timestep_embedding(t, dim, max_period=10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResMLPBlock(nn.Module):
    def __init__(self, hidden, temb_dim, dropout, generator):
        super().__init__()
        self.dropout = dropout
        self.generator = generator
        self.norm = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, hidden * 2)
        self.fc2 = nn.Linear(hidden * 2, hidden)
        self.temb = nn.Linear(temb_dim, hidden * 2)

    def forward(self, x, temb):
        h = F.silu(self.fc1(self.norm(x)) + self.temb(temb))
        if self.training and self.dropout > 0:
            # seeded dropout: masks come from the run's own generator, not the global RNG
            keep = torch.rand(h.shape, generator=self.generator) >= self.dropout
            h = h * keep / (1.0 - self.dropout)
        return x + self.fc2(h)


class Denoiser(nn.Module):
    def __init__(self, hidden=256, depth=4, temb_dim=64, dropout=0.1, generator=None):
        super().__init__()
        self.temb_dim = temb_dim
        self.inp = nn.Linear(2, hidden)
        self.temb_mlp = nn.Sequential(nn.Linear(temb_dim, temb_dim), nn.SiLU(), nn.Linear(temb_dim, temb_dim))
        self.blocks = nn.ModuleList(ResMLPBlock(hidden, temb_dim, dropout, generator) for _ in range(depth))
        self.out = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 2))

    def forward(self, x, t):
        temb = self.temb_mlp(timestep_embedding(t, self.temb_dim))
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h, temb)
        return self.out(h)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=200, generator=None):
        super().__init__()
        self.model = model
        self.timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("betas", betas)
        self.register_buffer("sqrt_ac", alphas_cumprod.sqrt())
        self.register_buffer("sqrt_1m_ac", (1.0 - alphas_cumprod).sqrt())
        self.generator = generator

    def q_sample(self, x0, t, noise):
        return self.sqrt_ac[t][:, None] * x0 + self.sqrt_1m_ac[t][:, None] * noise

    def training_loss(self, x0):
        b = x0.shape[0]
        t = torch.randint(0, self.timesteps, (b,), generator=self.generator)
        noise = torch.randn(x0.shape, generator=self.generator)
        x_t = self.q_sample(x0, t, noise)
        pred = self.model(x_t, t)
        return F.mse_loss(pred, noise)

    @torch.no_grad()
    def sample(self, n):
        x = torch.randn(n, 2, generator=self.generator)
        for i in reversed(range(self.timesteps)):
            t = torch.full((n,), i, dtype=torch.long)
            eps = self.model(x, t)
            alpha = 1.0 - self.betas[i]
            x = (x - self.betas[i] / self.sqrt_1m_ac[i] * eps) / alpha.sqrt()
            if i > 0:
                x = x + self.betas[i].sqrt() * torch.randn(x.shape, generator=self.generator)
        return x


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    data_gen = torch.Generator().manual_seed(args.seed)
    data = make_data(20000, data_gen)

    gen = torch.Generator().manual_seed(args.seed)
    denoiser = Denoiser(args.hidden, args.depth, dropout=args.dropout, generator=gen)
    diffusion = GaussianDiffusion(denoiser, args.timesteps, generator=gen)
    opt = torch.optim.AdamW(diffusion.parameters(), lr=args.lr)
    loss_fn = torch.compile(diffusion.training_loss, fullgraph=args.fullgraph) if args.compile else diffusion.training_loss
    log.info("params %.2fM compile=%s", sum(p.numel() for p in diffusion.parameters()) / 1e6, args.compile)

    warmup = 10
    t_start = time.perf_counter()
    t_warm = None
    running = 0.0
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, data.shape[0], (args.batch_size,), generator=data_gen)
        loss = loss_fn(data[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running += loss.item()
        if step == warmup:
            t_warm = time.perf_counter()
            log.info("warmup (%d steps, incl. compile) %.1fs", warmup, t_warm - t_start)
        if step % args.log_every == 0:
            log.info("step %d loss %.4f", step, running / args.log_every)
            running = 0.0
    steady = (time.perf_counter() - t_warm) / (args.steps - warmup)
    log.info("steady-state %.2f ms/step", steady * 1e3)

    diffusion.eval()
    samples = diffusion.sample(1000)
    log.info("sample mean %s std %s", samples.mean(0).tolist(), samples.std(0).tolist())


if __name__ == "__main__":
    main()
