import argparse
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from configs import CONFIGS
from dist_utils import all_ranks_equal, param_megabytes, pick_bucket_cap_mb, setup
from model import TinyGPT


def synthetic_batches(cfg, rank, device, n):
    g = torch.Generator().manual_seed(1234 + rank)
    for _ in range(n):
        data = torch.randint(0, cfg.model.vocab_size, (cfg.micro_batch, cfg.model.seq_len + 1), generator=g)
        yield data[:, :-1].to(device), data[:, 1:].to(device)


def lr_at(step, cfg):
    return cfg.lr * min(1.0, (step + 1) / cfg.warmup_steps)


def train(args, rank, world, device):
    cfg = CONFIGS[args.config]
    torch.manual_seed(0)
    model = TinyGPT(cfg.model).to(device)

    bucket_mb = pick_bucket_cap_mb(model, cfg.ddp_target_buckets)
    if rank == 0:
        print(f"[{args.config}] params={param_megabytes(model):.1f} MiB world={world} "
              f"bucket_cap_mb={bucket_mb} compile={args.compile}", flush=True)
    ddp_model = DDP(model, bucket_cap_mb=bucket_mb, gradient_as_bucket_view=True)
    train_model = torch.compile(ddp_model) if args.compile else ddp_model

    opt = torch.optim.AdamW(ddp_model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(synthetic_batches(cfg, rank, device, args.steps)):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        loss = train_model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

        avg = loss.detach().clone()
        dist.all_reduce(avg)
        if rank == 0:
            print(f"step {step} loss {avg.item() / world:.4f} ({time.perf_counter() - t0:.1f}s)", flush=True)

    synced = all(all_ranks_equal(p) for p in ddp_model.parameters())
    if rank == 0:
        print(f"done: {args.steps} steps, params in sync across ranks: {synced}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="tiny", choices=sorted(CONFIGS))
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--compile", action="store_true")
    args = ap.parse_args()

    rank, world, device = setup()
    try:
        train(args, rank, world, device)
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
