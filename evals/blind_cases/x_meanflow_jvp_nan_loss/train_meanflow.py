"""MeanFlow (average-velocity flow matching) on a 2-D toy distribution.

u_theta(z, r, t) predicts the average velocity between times r and t.  The
training target uses the total derivative du/dt, obtained with a forward-mode
JVP through the network (tangents: dz/dt = v, dr/dt = 0, dt/dt = 1).
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


# ----------------------------------------------------------------------------
# numerics helpers
# ----------------------------------------------------------------------------
class SafeSqrt(torch.autograd.Function):
    """sqrt with a bounded derivative at 0 (the interval h = t - r is often 0)."""

    @staticmethod
    def forward(x):
        return torch.sqrt(x.clamp_min(0.0))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad / (2.0 * y.clamp_min(1e-3))

    @staticmethod
    def jvp(ctx, tangent):
        (y,) = ctx.saved_tensors
        return tangent / (2.0 * y.clamp_min(1e-3))


def safe_sqrt(x):
    return SafeSqrt.apply(x)


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class FourierTime(nn.Module):
    def __init__(self, dim, max_freq=16.0):
        super().__init__()
        freqs = torch.exp(torch.linspace(0.0, math.log(max_freq), dim // 2))
        self.register_buffer("freqs", freqs)

    def forward(self, s):
        ang = s[:, None] * self.freqs[None, :] * math.pi
        return torch.cat([ang.sin(), ang.cos()], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, width, cond_dim):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(width))
        self.fc1 = nn.Linear(width, width * 2)
        self.fc2 = nn.Linear(width * 2, width)
        self.film = nn.Linear(cond_dim, width * 2)

    def forward(self, x, c):
        scale, shift = self.film(c).chunk(2, dim=-1)
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.gain
        h = h * (1 + scale) + shift
        return x + self.fc2(F.silu(self.fc1(h)))


class MeanVelocityNet(nn.Module):
    def __init__(self, width=128, depth=2, tdim=32):
        super().__init__()
        self.t_emb = FourierTime(tdim)
        self.h_emb = FourierTime(tdim)
        cond_dim = 2 * tdim + 1
        self.inp = nn.Linear(2, width)
        self.blocks = nn.ModuleList([ResBlock(width, cond_dim) for _ in range(depth)])
        self.out = nn.Linear(width, 2)

    def forward(self, z, r, t):
        h = t - r
        cond = torch.cat([self.t_emb(t), self.h_emb(h), safe_sqrt(h)[:, None]], dim=-1)
        x = self.inp(z)
        for blk in self.blocks:
            x = blk(x, cond)
        return self.out(x)


# ----------------------------------------------------------------------------
# data + time sampling
# ----------------------------------------------------------------------------
def sample_data(n, gen):
    k = torch.randint(0, 8, (n,), generator=gen)
    ang = k.float() * (2 * math.pi / 8)
    centers = torch.stack([ang.cos(), ang.sin()], dim=-1) * 2.0
    return centers + 0.15 * torch.randn(n, 2, generator=gen)


def sample_times(n, gen, equal_frac=0.75):
    a = torch.sigmoid(torch.randn(n, generator=gen) * 1.0 - 0.4)
    b = torch.sigmoid(torch.randn(n, generator=gen) * 1.0 - 0.4)
    t, r = torch.maximum(a, b), torch.minimum(a, b)
    same = torch.rand(n, generator=gen) < equal_frac
    r = torch.where(same, t, r)
    return r, t


def meanflow_loss(model, x, eps, r, t):
    z = (1 - t[:, None]) * x + t[:, None] * eps
    v = eps - x
    u, dudt = torch.func.jvp(
        model,
        (z, r, t),
        (v, torch.zeros_like(r), torch.ones_like(t)),
    )
    u_tgt = (v - (t - r)[:, None] * dudt).detach()
    err = (u - u_tgt).pow(2).sum(dim=-1)
    w = 1.0 / (err.detach() + 1e-3).pow(0.5)          # adaptive loss weighting
    return (w * err).mean(), err.mean()


@torch.no_grad()
def sample_one_step(model, n, gen):
    eps = torch.randn(n, 2, generator=gen)
    ones, zeros = torch.ones(n), torch.zeros(n)
    return eps - model(eps, zeros, ones)


def mmd_to_data(samples, gen):
    ref = sample_data(samples.shape[0], gen)
    def k(a, b):
        return torch.exp(-torch.cdist(a, b).pow(2) / 0.5).mean()
    return (k(samples, samples) + k(ref, ref) - 2 * k(samples, ref)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = MeanVelocityNet()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)

    loss_fn = torch.compile(meanflow_loss) if args.compile else meanflow_loss
    print(f"torch {torch.__version__}  compile={args.compile}")

    t0 = time.time()
    for step in range(args.steps):
        x = sample_data(args.batch, gen)
        eps = torch.randn(args.batch, 2, generator=gen)
        r, t = sample_times(args.batch, gen)
        loss, raw = loss_fn(model, x, eps, r, t)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}  raw_mse {raw.item():.4f}  "
                  f"grad_norm {gnorm.item():.3f}  ({time.time() - t0:.1f}s)")

    model.eval()
    samples = sample_one_step(model, 1024, gen)
    print(f"1-step sample MMD vs data: {mmd_to_data(samples, gen):.4f}")
    print(f"any NaN in params: {any(p.isnan().any().item() for p in model.parameters())}")


if __name__ == "__main__":
    main()
