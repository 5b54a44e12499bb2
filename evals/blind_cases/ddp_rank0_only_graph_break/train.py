"""DDP + torch.compile pretraining of a small residual MLP, with activation monitoring
(only the main process records activation statistics, to keep logs small).

    torchrun --nproc_per_node 2 train.py --steps 40
"""
import argparse
import logging
import time
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")


class ActivationMonitor:
    """Keeps running activation RMS per layer for the dashboard. No-op when disabled."""
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.stats = defaultdict(list)

    def record(self, name, t):
        if self.enabled:
            self.stats[name].append(t.detach().pow(2).mean().sqrt().item())


class ResMLP(nn.Module):
    def __init__(self, d_in=64, d=256, depth=3, n_out=16, monitor=None):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(),
                                                   nn.Linear(2 * d, d)) for _ in range(depth)])
        self.out = nn.Linear(d, n_out)
        self.monitor = monitor or ActivationMonitor(False)

    def forward(self, x):
        h = self.inp(x)
        for i, blk in enumerate(self.blocks):
            h = h + blk(h)
            self.monitor.record(f"block{i}", h)
        return self.out(h)


def batches(steps, bsz, rank, d_in=64, n_out=16):
    g = torch.Generator().manual_seed(100 + rank)
    w = torch.randn(d_in, n_out, generator=torch.Generator().manual_seed(0))
    for _ in range(steps):
        x = torch.randn(bsz, d_in, generator=g)
        yield x, torch.tanh(x @ w)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(message)s")
    torch.manual_seed(0)

    monitor = ActivationMonitor(enabled=(rank == 0))
    model = torch.compile(DDP(ResMLP(monitor=monitor)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    step_times = []
    for step, (x, y) in enumerate(batches(args.steps, args.batch, rank)):
        t = time.perf_counter()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - t)
        if step % 20 == 0:
            log.info("step %d loss %.4f", step, loss.item())
    steady = sorted(step_times[5:])[len(step_times[5:]) // 2]
    log.info("median step %.1f ms | dynamo: unique_graphs=%d graph_breaks=%d",
             steady * 1e3, counters["stats"]["unique_graphs"], sum(counters["graph_break"].values()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
