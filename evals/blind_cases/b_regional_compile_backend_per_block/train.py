import argparse
import math
import time

import torch

from compile_utils import compile_repeated_blocks, report
from model import TinyLM


def batches(data, batch_size, seq_len, gen):
    while True:
        starts = torch.randint(0, data.numel() - seq_len - 1, (batch_size,), generator=gen)
        x = torch.stack([data[s : s + seq_len] for s in starts])
        y = torch.stack([data[s + 1 : s + seq_len + 1] for s in starts])
        yield x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    # synthetic corpus with some structure: noisy repeats of a fixed token sequence
    base = torch.randint(0, 2048, (512,), generator=gen)
    data = torch.cat([torch.where(torch.rand(512, generator=gen) < 0.1, torch.randint(0, 2048, (512,), generator=gen), base) for _ in range(64)])

    model = TinyLM()
    if args.compile:
        compile_repeated_blocks(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, betas=(0.9, 0.95))
    it = batches(data, args.batch_size, args.seq_len, gen)

    t_start = time.perf_counter()
    step_times = []
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / 5) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        x, y = next(it)
        t0 = time.perf_counter()
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step_times.append(time.perf_counter() - t0)
        if step == 0:
            print(f"step 0 done after {time.perf_counter() - t_start:.1f}s", flush=True)
        if step % 10 == 9:
            print(f"step {step + 1:3d}  loss {loss.item():.4f}  lr {lr:.2e}", flush=True)
    steady = sorted(step_times[5:])[len(step_times[5:]) // 2]
    print(f"total {time.perf_counter() - t_start:.1f}s  median step {steady * 1e3:.1f} ms", flush=True)
    if args.compile:
        print(report(), flush=True)


if __name__ == "__main__":
    main()
