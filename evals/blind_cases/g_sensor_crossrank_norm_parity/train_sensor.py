import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--channels", type=int, default=12)
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--classes", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--parity", action="store_true", help="run eager and compiled back to back and compare")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


class CrossRankNorm(nn.Module):
    """Batch norm whose statistics are pooled over all data-parallel ranks.

    nn.SyncBatchNorm has no CPU path, so the pooled moments are reduced by hand.
    A per-channel absolute maximum is tracked as well and used to clip outliers
    before normalisation (sensor glitches produce huge spikes).
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, clip_ratio=0.9):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.clip_ratio = clip_ratio
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("running_absmax", torch.ones(num_features))

    def _pooled_stats(self, x):
        # x: (B, C, T)
        n = torch.tensor(float(x.shape[0] * x.shape[2]))
        with torch.no_grad():
            absmax = x.detach().abs().amax(dim=(0, 2))
        s1 = x.sum(dim=(0, 2))
        s2 = (x * x).sum(dim=(0, 2))
        # one buffer per layer: [sum, sum of squares, abs max]
        stats = torch.stack([s1.detach(), s2.detach(), absmax], dim=1)
        if dist.is_available() and dist.is_initialized():
            world = dist.get_world_size()
            dist.all_reduce(stats[:, :2], op=dist.ReduceOp.SUM)
            dist.all_reduce(stats[:, 2], op=dist.ReduceOp.MAX)
            n = n * world
        g_s1 = stats[:, 0]
        g_s2 = stats[:, 1]
        # keep the autograd path through the local sums (like SyncBN's backward)
        mean = (s1 - s1.detach() + g_s1) / n
        var = (s2 - s2.detach() + g_s2) / n - mean * mean
        return mean, var.clamp_min(0.0), stats[:, 2]

    def forward(self, x):
        if self.training:
            mean, var, absmax = self._pooled_stats(x)
            with torch.no_grad():
                self.running_mean.lerp_(mean.detach(), self.momentum)
                self.running_var.lerp_(var.detach(), self.momentum)
                self.running_absmax.lerp_(absmax, self.momentum)
        else:
            mean, var, absmax = self.running_mean, self.running_var, self.running_absmax
        lim = (absmax * self.clip_ratio)[None, :, None]
        x = torch.maximum(torch.minimum(x, lim), -lim)
        x = (x - mean[None, :, None]) * torch.rsqrt(var[None, :, None] + self.eps)
        return x * self.weight[None, :, None] + self.bias[None, :, None]


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k=5, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=dilation * (k - 1) // 2, dilation=dilation)
        self.norm = CrossRankNorm(cout)
        self.skip = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return F.gelu(self.norm(self.conv(x))) + self.skip(x)


class ActivityNet(nn.Module):
    def __init__(self, channels, classes, width=48):
        super().__init__()
        self.inp_norm = CrossRankNorm(channels)
        self.blocks = nn.Sequential(
            ConvBlock(channels, width, dilation=1),
            ConvBlock(width, width, dilation=2),
            ConvBlock(width, width, dilation=4),
            ConvBlock(width, 2 * width, dilation=8),
        )
        self.head = nn.Sequential(nn.Linear(4 * width, 64), nn.GELU(), nn.Linear(64, classes))

    def forward(self, x):
        h = self.blocks(self.inp_norm(x))
        pooled = torch.cat([h.mean(dim=2), h.amax(dim=2)], dim=1)
        return self.head(pooled)


def make_batch(gen, args, rank):
    # synthetic IMU windows: class-dependent frequency + per-rank sensor offset
    y = torch.randint(0, args.classes, (args.batch,), generator=gen)
    t = torch.arange(args.window, dtype=torch.float32)[None, None, :]
    freq = (1.0 + y.float())[:, None, None] * 0.05
    phase = torch.rand(args.batch, args.channels, 1, generator=gen) * 6.28
    x = torch.sin(freq * t + phase) + 0.3 * torch.randn(args.batch, args.channels, args.window, generator=gen)
    x = x * (1.0 + 0.5 * rank) + 0.2 * rank
    spikes = torch.rand(x.shape, generator=gen) < 0.002
    x = torch.where(spikes, x * 25.0, x)
    return x, y


def train(args, use_compile, rank, world):
    torch.manual_seed(args.seed)
    model = ActivityNet(args.channels, args.classes)
    ddp = DDP(model)
    step_model = torch.compile(ddp) if use_compile else ddp
    opt = torch.optim.AdamW(ddp.parameters(), lr=args.lr, weight_decay=1e-2)
    gen = torch.Generator().manual_seed(args.seed + 17 * rank)
    losses = []
    t0 = time.time()
    for step in range(args.steps):
        x, y = make_batch(gen, args, rank)
        logits = step_model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if step % 10 == 0 or step == args.steps - 1:
            print(f"[rank{rank}] {'compiled' if use_compile else 'eager   '} step {step:3d} loss {loss.item():.5f}", flush=True)
    elapsed = time.time() - t0
    rm = model.inp_norm.running_mean.clone()
    return losses, rm, elapsed


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    if args.parity:
        le, rme, te = train(args, False, rank, world)
        lc, rmc, tc = train(args, True, rank, world)
        first = next((i for i, (a, b) in enumerate(zip(le, lc)) if not math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5)), None)
        print(f"[rank{rank}] eager {te:.1f}s compiled {tc:.1f}s | first mismatching step: {first} | "
              f"final loss eager {le[-1]:.5f} compiled {lc[-1]:.5f} | "
              f"inp_norm.running_mean max diff {(rme - rmc).abs().max().item():.4e}", flush=True)
        both = torch.stack([rme, rmc])
        gathered = [torch.zeros_like(both) for _ in range(world)]
        dist.all_gather(gathered, both)
        if rank == 0:
            print(f"running_mean rank0 vs rank1: eager {(gathered[0][0] - gathered[1][0]).abs().max().item():.4e} "
                  f"compiled {(gathered[0][1] - gathered[1][1]).abs().max().item():.4e}", flush=True)
    else:
        losses, _, el = train(args, args.compile, rank, world)
        print(f"[rank{rank}] done: final loss {losses[-1]:.5f} in {el:.1f}s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
