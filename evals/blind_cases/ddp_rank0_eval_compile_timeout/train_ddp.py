"""DDP + torch.compile training of a small tabular classifier, with periodic validation
on rank 0.

    torchrun --nproc_per_node 2 train_ddp.py --steps 30 --eval-every 10
"""
import argparse
import datetime
import logging
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

log = logging.getLogger("train")

# Each job starts in a fresh container: no compile cache survives between runs.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-cache-"))


class Net(nn.Module):
    def __init__(self, d_in=64, d=256, n_cls=10):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(),
                                                   nn.Linear(2 * d, d)) for _ in range(3)])
        self.out = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, n_cls))

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return self.out(h)


def make_split(n, seed, d_in=64, n_cls=10):
    proto = torch.randn(n_cls, d_in, generator=torch.Generator().manual_seed(7))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_cls, (n,), generator=g)
    return proto[y] + 4.0 * torch.randn(n, d_in, generator=g), y


@torch.no_grad()
def evaluate(model, xs, ys, bsz):
    model.eval()
    correct = 0
    for i in range(0, len(xs), bsz):
        correct += (model(xs[i:i + bsz]).argmax(-1) == ys[i:i + bsz]).sum().item()
    model.train()
    return correct / len(xs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--eval-every", type=int, default=10)
    p.add_argument("--eval-batch", type=int, default=500)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--dist-timeout", type=int, default=10,
                   help="seconds; we keep this short so a stuck job fails fast instead of burning the allocation")
    args = p.parse_args()

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.dist_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s [rank{rank}] %(message)s")
    torch.manual_seed(0)

    model = DDP(Net())
    if not args.no_compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    xtr, ytr = make_split(args.steps * args.batch * world, seed=1 + rank)
    xva, yva = make_split(1200, seed=999)

    t0 = time.time()
    for step in range(args.steps):
        xb = xtr[step * args.batch:(step + 1) * args.batch]
        yb = ytr[step * args.batch:(step + 1) * args.batch]
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 5 == 0:
            log.info("step %d loss %.4f (%.1fs)", step, loss.item(), time.time() - t0)
        if rank == 0 and (step + 1) % args.eval_every == 0:
            acc = evaluate(model, xva, yva, args.eval_batch)
            log.info("step %d val_acc %.4f", step, acc)
    log.info("finished %d steps in %.1fs", args.steps, time.time() - t0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
