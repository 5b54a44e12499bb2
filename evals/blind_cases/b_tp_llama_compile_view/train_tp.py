"""Tensor-parallel pretraining smoke run (CPU / gloo).

    torchrun --nproc_per_node=2 train_tp.py
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh

from model import ModelArgs, Transformer
from parallel import apply_tp


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def synthetic_batches(args, vocab, seed):
    # every TP rank must see the same tokens
    g = torch.Generator().manual_seed(seed)
    while True:
        x = torch.randint(0, vocab, (args.batch_size, args.seq_len + 1), generator=g)
        yield x[:, :-1], x[:, 1:]


def log(msg):
    if dist.get_rank() == 0:
        print(msg, flush=True)


def main():
    args = get_args()
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    tp_mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))

    torch.manual_seed(args.seed)
    margs = ModelArgs()
    model = Transformer(margs)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model params: {n_params / 1e6:.2f}M, tp degree {world}")

    model = apply_tp(model, tp_mesh)
    if not args.no_compile:
        for i, block in enumerate(model.layers):
            model.layers[i] = torch.compile(block)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, foreach=False)
    batches = synthetic_batches(args, margs.vocab_size, args.seed)

    model.train()
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        tokens, labels = next(batches)
        logits = model(tokens)
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        log(f"step {step:3d} | loss {loss.item():.4f} | {dt * 1000:.0f} ms")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
