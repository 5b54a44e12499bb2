import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None, :]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, ch, emb_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.emb = nn.Linear(emb_dim, ch)
        self.norm2 = nn.GroupNorm(8, ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


class TinyDenoiser(nn.Module):
    """Small conditional UNet-ish eps-predictor used by the preview service."""

    def __init__(self, in_ch=4, ch=32, emb_dim=64, n_classes=10):
        super().__init__()
        self.emb_dim = emb_dim
        self.t_mlp = nn.Sequential(nn.Linear(emb_dim, emb_dim), nn.SiLU(), nn.Linear(emb_dim, emb_dim))
        self.class_emb = nn.Embedding(n_classes, emb_dim)
        self.inp = nn.Conv2d(in_ch, ch, 3, padding=1)
        self.down = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.mid = nn.ModuleList([ResBlock(ch, emb_dim) for _ in range(1)])
        self.up = nn.ConvTranspose2d(ch, ch, 4, stride=2, padding=1)
        self.res_up = ResBlock(ch, emb_dim)
        self.out = nn.Conv2d(ch, in_ch, 3, padding=1)

    def forward(self, x, t, cond_emb):
        emb = self.t_mlp(timestep_embedding(t, self.emb_dim)) + cond_emb
        h0 = self.inp(x)
        h = self.down(h0)
        for blk in self.mid:
            h = blk(h, emb)
        h = self.up(h) + h0
        h = self.res_up(h, emb)
        return self.out(F.silu(h))


class PreviewSampler:
    """DDIM sampler that streams low-res previews while it denoises.

    start() does the per-request setup and hands back a stream: iterating it
    yields (step, preview) pairs, and the finished latents are the stream's
    return value, so callers can do ``latents = yield from sampler.start(...)``.
    """

    def __init__(self, denoiser, num_train_steps=1000, num_steps=8, preview_every=2):
        self.denoiser = denoiser
        betas = torch.linspace(1e-4, 0.02, num_train_steps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.timesteps = torch.linspace(num_train_steps - 1, 0, num_steps).long().tolist()
        self.preview_every = preview_every

    def start(self, noise, labels, guidance=3.0):
        cond = self.denoiser.class_emb(labels)
        uncond = torch.zeros_like(cond)
        return self._denoise(noise, cond, uncond, guidance)

    def _denoise(self, x, cond, uncond, guidance):
        n = len(self.timesteps)
        for i in range(n):
            t = self.timesteps[i]
            t_prev = self.timesteps[i + 1] if i + 1 < n else None
            tt = torch.full((2 * x.shape[0],), t, dtype=torch.long)
            eps_c, eps_u = self.denoiser(torch.cat([x, x]), tt, torch.cat([cond, uncond])).chunk(2)
            eps = eps_u + guidance * (eps_c - eps_u)
            a_t = self.alphas_cumprod[t]
            a_prev = self.alphas_cumprod[t_prev] if t_prev is not None else torch.tensor(1.0)
            x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
            if (i + 1) % self.preview_every == 0 and i + 1 < n:
                yield i + 1, F.avg_pool2d(x0, 4)
        return x
