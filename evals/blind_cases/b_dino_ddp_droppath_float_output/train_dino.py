import argparse
import copy
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from vit import DINOModel


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--drop-path", type=float, default=0.1)
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def make_views(batch, gen):
    # two global crops: random flip + brightness jitter + noise (stand-in for the real augmentation pipeline)
    views = []
    for _ in range(2):
        v = torch.where(torch.rand(batch.shape[0], 1, 1, 1, generator=gen) < 0.5, batch.flip(-1), batch)
        v = v * (0.8 + 0.4 * torch.rand(batch.shape[0], 1, 1, 1, generator=gen))
        views.append(v + 0.05 * torch.randn(v.shape, generator=gen))
    return views


class DINOLoss(torch.nn.Module):
    def __init__(self, out_dim, student_temp=0.1, teacher_temp=0.04, center_momentum=0.9):
        super().__init__()
        self.student_temp, self.teacher_temp, self.center_momentum = student_temp, teacher_temp, center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_out, teacher_out):
        t = [F.softmax((o - self.center) / self.teacher_temp, dim=-1).detach() for o in teacher_out]
        total, n = 0.0, 0
        for iq, q in enumerate(t):
            for iv, s in enumerate(student_out):
                if iv == iq:
                    continue
                total = total + torch.sum(-q * F.log_softmax(s / self.student_temp, dim=-1), dim=-1).mean()
                n += 1
        self.update_center(torch.cat(teacher_out))
        return total / n

    @torch.no_grad()
    def update_center(self, teacher_out):
        batch_center = teacher_out.sum(dim=0, keepdim=True)
        dist.all_reduce(batch_center)
        batch_center = batch_center / (teacher_out.shape[0] * dist.get_world_size())
        self.center.mul_(self.center_momentum).add_(batch_center, alpha=1 - self.center_momentum)


def main():
    args = get_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)

    student = DINOModel(args.drop_path)
    teacher = copy.deepcopy(student)
    teacher.requires_grad_(False)
    if args.compile:
        # compile block-by-block: whole-model compile was taking too long on the cluster
        for blk in student.backbone.blocks:
            blk.compile()
    student_ddp = DDP(student)
    loss_fn = DINOLoss(1024)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.04)

    data = torch.randn(256, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    gen = torch.Generator().manual_seed(100 + rank)
    t0 = time.time()
    for step in range(args.steps):
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        idx = torch.randint(0, data.shape[0], (args.batch_size,), generator=gen)
        views = make_views(data[idx], gen)
        student_out = student_ddp(views)
        with torch.no_grad():
            teacher_out = teacher(views)
        loss = loss_fn(student_out, teacher_out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 3.0)
        opt.step()
        with torch.no_grad():
            for ps, pt in zip(student.parameters(), teacher.parameters()):
                pt.mul_(0.996).add_(ps.detach(), alpha=0.004)
        if rank == 0 and (step % 3 == 0 or step == args.steps - 1):
            print(f"step {step:3d}  loss {loss.item():.4f}  lr {lr:.2e}  elapsed {time.time() - t0:.1f}s", flush=True)
    if rank == 0:
        print(f"done: {args.steps} steps in {time.time() - t0:.1f}s", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
