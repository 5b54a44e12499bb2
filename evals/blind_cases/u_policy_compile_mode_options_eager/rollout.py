"""Closed-loop rollout of a flow-matching action-chunk policy (CPU robot controller).

The policy denoises an action chunk with a few Euler steps per control tick.
sample_actions() is compiled at startup for lower per-tick latency.
"""
import argparse
import logging
import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("rollout")


@dataclass
class RolloutConfig:
    obs_dim: int = 48
    act_dim: int = 12
    chunk: int = 16
    hidden: int = 256
    n_layers: int = 4
    denoise_steps: int = 8
    ticks: int = 60
    warmup_ticks: int = 3
    use_torch_compile: bool = True
    torch_compile_mode: str = "reduce-overhead"
    compile_options: dict = field(default_factory=lambda: {"triton.cudagraphs": False})
    seed: int = 0


class TimeEmbed(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-torch.arange(half, dtype=torch.float32) * (9.21 / half))
        ang = t[:, None] * 1000.0 * freqs[None]
        return self.mlp(torch.cat([ang.sin(), ang.cos()], dim=-1))


class ResMLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(dim, dim)
        self.film = nn.Linear(dim, 2 * dim)

    def forward(self, x, cond):
        scale, shift = self.film(cond).chunk(2, dim=-1)
        h = self.norm(x) * (1 + scale[:, None]) + shift[:, None]
        a, b = self.fc1(h).chunk(2, dim=-1)
        return x + self.fc2(F.silu(a) * b)


class FlowPolicy(nn.Module):
    def __init__(self, cfg: RolloutConfig):
        super().__init__()
        self.cfg = cfg
        self.obs_enc = nn.Sequential(nn.Linear(cfg.obs_dim, cfg.hidden), nn.GELU(),
                                     nn.Linear(cfg.hidden, cfg.hidden))
        self.t_emb = TimeEmbed(cfg.hidden)
        self.act_in = nn.Linear(cfg.act_dim, cfg.hidden)
        self.pos = nn.Parameter(torch.randn(1, cfg.chunk, cfg.hidden) * 0.02)
        self.blocks = nn.ModuleList([ResMLPBlock(cfg.hidden) for _ in range(cfg.n_layers)])
        self.out = nn.Linear(cfg.hidden, cfg.act_dim)

    def velocity(self, x_t, t, obs_feat):
        cond = obs_feat + self.t_emb(t)
        h = self.act_in(x_t) + self.pos
        for blk in self.blocks:
            h = blk(h, cond)
        return self.out(h)

    def sample_actions(self, obs, noise):
        obs_feat = self.obs_enc(obs)
        x = noise
        n = self.cfg.denoise_steps
        dt = 1.0 / n
        for i in range(n):
            t = torch.full((obs.shape[0],), 1.0 - i * dt)
            x = x - dt * self.velocity(x, t, obs_feat)
        return x.clamp(-1.0, 1.0)


class ToyArm:
    """Tiny stand-in for the real robot: linear dynamics + noise."""

    def __init__(self, cfg, gen):
        self.cfg = cfg
        self.gen = gen
        self.A = torch.eye(cfg.obs_dim) * 0.98
        self.B = torch.randn(cfg.obs_dim, cfg.act_dim, generator=gen) * 0.05
        self.state = torch.randn(1, cfg.obs_dim, generator=gen)

    def step(self, action):
        self.state = self.state @ self.A.t() + action @ self.B.t()
        self.state = self.state + 0.01 * torch.randn(self.state.shape, generator=self.gen)
        return self.state


def maybe_compile(fn, cfg: RolloutConfig):
    if not cfg.use_torch_compile:
        return fn
    try:
        compiled = torch.compile(fn, mode=cfg.torch_compile_mode, options=cfg.compile_options)
        log.info("torch.compile enabled (mode=%s)", cfg.torch_compile_mode)
        return compiled
    except Exception as e:  # keep the controller alive on exotic platforms
        log.warning("Failed to apply torch.compile: %s", e)
        return fn


@torch.inference_mode()
def run(cfg: RolloutConfig):
    torch.manual_seed(cfg.seed)
    policy = FlowPolicy(cfg).eval()
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    arm = ToyArm(cfg, gen)
    sample = maybe_compile(policy.sample_actions, cfg)
    log.info("torch %s, compile=%s", torch.__version__, cfg.use_torch_compile)

    obs = arm.state
    t_start = time.perf_counter()
    for _ in range(cfg.warmup_ticks):
        sample(obs, torch.randn(1, cfg.chunk, cfg.act_dim, generator=gen))
    log.info("warm-up (%d ticks) took %.2fs", cfg.warmup_ticks, time.perf_counter() - t_start)

    lat = []
    total_cost = 0.0
    for tick in range(cfg.ticks):
        noise = torch.randn(1, cfg.chunk, cfg.act_dim, generator=gen)
        t0 = time.perf_counter()
        chunk = sample(obs, noise)
        lat.append((time.perf_counter() - t0) * 1000)
        obs = arm.step(chunk[:, 0])
        total_cost += obs.square().mean().item()
    med = statistics.median(lat)
    p90 = sorted(lat)[int(0.9 * len(lat))]
    log.info("policy latency median %.2f ms  p90 %.2f ms  (ticks=%d)", med, p90, cfg.ticks)
    log.info("mean state cost %.5f", total_cost / cfg.ticks)
    return med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--mode", default=RolloutConfig.torch_compile_mode)
    ap.add_argument("--ticks", type=int, default=RolloutConfig.ticks)
    a = ap.parse_args()
    cfg = RolloutConfig(use_torch_compile=not a.no_compile, torch_compile_mode=a.mode, ticks=a.ticks)
    run(cfg)


if __name__ == "__main__":
    main()
