"""Small GPT pretraining loop (CPU smoke config of our nightly job).

    python train_gpt_small.py --n-layer 6
"""
import argparse
import time

import torch

from model import GPT


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-layer", type=int, default=6)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--block-size", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--vocab-size", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--no-compile", action="store_true")
    return ap.parse_args()


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if p.dim() >= 2 else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def batches(args, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    # stand-in for the memory-mapped token shards: a noisy bigram chain
    total = n * args.batch_size * (args.block_size + 1) + 1
    successor = torch.randperm(args.vocab_size, generator=g)
    jumps = torch.rand(total, generator=g) < 0.2
    randoms = torch.randint(0, args.vocab_size, (total,), generator=g)
    tokens = [0] * total
    for i in range(1, total):
        tokens[i] = int(randoms[i]) if jumps[i] else int(successor[tokens[i - 1]])
    data = torch.tensor(tokens)
    for i in range(n):
        chunk = data[i * args.batch_size * (args.block_size + 1):][: args.batch_size * (args.block_size + 1)]
        chunk = chunk.view(args.batch_size, args.block_size + 1)
        yield chunk[:, :-1].contiguous(), chunk[:, 1:].contiguous()


def main():
    args = get_args()
    torch.manual_seed(0)
    model = GPT(args.vocab_size, args.block_size, args.n_layer, args.n_head, args.d_model)
    opt = torch.optim.AdamW(param_groups(model, 0.1), lr=args.lr, betas=(0.9, 0.95))
    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(len(g["params"]) for g in opt.param_groups)
    print(f"n_layer={args.n_layer} params={n_params / 1e6:.2f}M in {n_tensors} tensors | compile={not args.no_compile}")

    if args.no_compile:
        train_model = model
        opt_step = opt.step
    else:
        train_model = torch.compile(model)

        @torch.compile(fullgraph=False)
        def opt_step():
            opt.step()

    t_start = time.perf_counter()
    step_times = []
    for step, (x, y) in enumerate(batches(args, args.steps)):
        t0 = time.perf_counter()
        loss = train_model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt_step()
        opt.zero_grad(set_to_none=True)
        t1 = time.perf_counter()
        if step == 0:
            print(f"step 0 finished {t1 - t_start:.1f}s after start")
        else:
            step_times.append(t1 - t0)
        if step % 10 == 0:
            print(f"step {step:3d} loss {loss.item():.4f}")
    print(f"steady-state step {1000 * sorted(step_times)[len(step_times) // 2]:.1f} ms (median of {len(step_times)})")
    print(f"total wall {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
