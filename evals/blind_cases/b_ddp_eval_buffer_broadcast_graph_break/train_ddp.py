"""Small CNN image classifier, DDP over gloo on CPU, compiled with torch.compile."""
import argparse
import logging
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train_ddp")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--eval-batches", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SmallNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            ConvBlock(3, 16), ConvBlock(16, 32, 2), ConvBlock(32, 32), ConvBlock(32, 64, 2)
        )
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def synthetic_batch(bs, g):
    y = torch.randint(0, 10, (bs,), generator=g)
    x = torch.randn(bs, 3, 16, 16, generator=g) * 0.5
    x[:, y % 3, :, :] += (y[:, None, None].float() / 10.0)
    return x, y


def evaluate(model, n_batches, bs, g):
    model.eval()
    correct = total = 0
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(n_batches):
            x, y = synthetic_batch(bs, g)
            pred = model(x).argmax(1)
            correct += (pred == y).sum().item()
            total += y.numel()
    stats = torch.tensor([correct, total], dtype=torch.float64)
    dist.all_reduce(stats)
    model.train()
    return (stats[0] / stats[1]).item(), (time.perf_counter() - t0) / n_batches


def main():
    args = parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    logging.basicConfig(level=logging.INFO if rank == 0 else logging.WARNING,
                        format=f"%(asctime)s [rank{rank}] %(message)s")
    torch.manual_seed(0)
    model = DDP(SmallNet())
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)
    eval_g = torch.Generator().manual_seed(999 + rank)

    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        for step in range(args.steps_per_epoch):
            x, y = synthetic_batch(args.batch_size, g)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        train_ms = (time.perf_counter() - t0) / args.steps_per_epoch * 1e3
        acc, eval_s = evaluate(model, args.eval_batches, args.batch_size * 2, eval_g)
        log.info("epoch %d loss %.4f train %.1f ms/step eval acc %.3f eval %.1f ms/batch",
                 epoch, loss.item(), train_ms, acc, eval_s * 1e3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
