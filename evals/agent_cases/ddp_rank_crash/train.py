"""Data-parallel training of a small tabular regression model, compiled.

    torchrun --nproc-per-node 2 train.py
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

N_FEATURES = 16
PROMO = 7            # column 7: 1.0 while a promotion ran (the last quarter of the period)


def make_dataset(n=512):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, N_FEATURES, generator=g)
    x[:, PROMO] = (torch.arange(n) >= 3 * n // 4).float()
    w = torch.linspace(-1, 1, N_FEATURES)
    y = (x @ w + 0.5 * x[:, PROMO]).unsqueeze(1)
    return x, y


def load_shard(rank, world):
    """This rank's contiguous slice of the data, with uninformative (constant) columns dropped."""
    x, y = make_dataset()
    n = len(x) // world
    x, y = x[rank * n:(rank + 1) * n], y[rank * n:(rank + 1) * n]
    informative = x.std(dim=0) > 0
    return x[:, informative], y


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_FEATURES, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                 nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.compile(DDP(Regressor()))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = load_shard(rank, world)
    for epoch in range(20):
        for i in range(0, len(x), 32):
            opt.zero_grad()
            loss = F.mse_loss(model(x[i:i + 32]), y[i:i + 32])
            loss.backward()
            opt.step()
        if rank == 0 and epoch % 5 == 4:
            print(f"epoch {epoch + 1}: loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
