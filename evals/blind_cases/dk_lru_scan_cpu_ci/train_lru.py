"""Linear-recurrent (LRU-style) sequence classifier for machine-vibration windows.

Gated linear recurrence h_t = a_t * h_{t-1} + b_t evaluated with a parallel
associative scan, so training is O(log T) deep instead of a Python time loop.

    python train_lru.py --steps 20            # eager
    python train_lru.py --steps 20 --compile  # torch.compile
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._higher_order_ops.associative_scan import associative_scan

log = logging.getLogger("train_lru")

SCAN_MODE = "pointwise"


def _lru_combine(left, right):
    a_l, b_l = left
    a_r, b_r = right
    return a_l * a_r, a_r * b_l + b_r


def linear_recurrence(a, b, dim=1):
    """h_t = a_t * h_{t-1} + b_t with h_{-1} = 0, for all t at once."""
    _, h = associative_scan(_lru_combine, (a, b), dim=dim, combine_mode=SCAN_MODE)
    return h


class LRUBlock(nn.Module):
    def __init__(self, d_model, d_state, dropout=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.in_proj = nn.Linear(d_model, 2 * d_state)
        self.gate_proj = nn.Linear(d_model, d_state)
        self.out_proj = nn.Linear(d_state, d_model)
        self.log_decay = nn.Parameter(torch.linspace(-4.0, -0.5, d_state))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = self.norm(x)
        u, z = self.in_proj(h).chunk(2, dim=-1)
        gate = torch.sigmoid(self.gate_proj(h))
        decay = torch.exp(-torch.exp(self.log_decay))          # in (0, 1)
        a = decay * gate
        b = (1.0 - a) * u
        s = linear_recurrence(a, b, dim=1)
        y = self.out_proj(s * F.silu(z))
        return x + self.drop(y)


class VibrationLRU(nn.Module):
    def __init__(self, n_channels=3, d_model=32, d_state=32, n_layers=2, n_classes=4):
        super().__init__()
        self.embed = nn.Linear(n_channels, d_model)
        self.blocks = nn.ModuleList(LRUBlock(d_model, d_state) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, x):
        h = self.embed(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h).mean(dim=1))


def synthetic_batch(batch, length, n_classes, gen):
    """Four fault classes = four dominant vibration frequencies plus noise."""
    labels = torch.randint(0, n_classes, (batch,), generator=gen)
    t = torch.arange(length, dtype=torch.float32) / length
    freqs = (3.0 + 4.0 * labels.float()).unsqueeze(1)
    phase = torch.rand(batch, 1, generator=gen) * 2 * math.pi
    base = torch.sin(2 * math.pi * freqs * t + phase)
    x = torch.stack([base, 0.5 * base.roll(3, dims=1), torch.cos(2 * math.pi * freqs * t)], dim=-1)
    x = x + 0.3 * torch.randn(x.shape, generator=gen)
    return x, labels


def evaluate(model, n_batches, args, gen):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for _ in range(n_batches):
            x, y = synthetic_batch(args.batch_size, args.seq_len, args.n_classes, gen)
            correct += (model(x).argmax(-1) == y).sum().item()
            total += y.numel()
    model.train()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--n-classes", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    model = VibrationLRU(n_classes=args.n_classes)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_fn = torch.compile(model) if args.compile else model
    log.info("params=%d compile=%s scan_mode=%s", sum(p.numel() for p in model.parameters()),
             args.compile, SCAN_MODE)

    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = synthetic_batch(args.batch_size, args.seq_len, args.n_classes, gen)
        loss = F.cross_entropy(step_fn(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == 1:
            log.info("first step done in %.1fs", time.perf_counter() - t0)
        if step % 5 == 0:
            log.info("step %d loss %.4f", step, loss.item())
    acc = evaluate(model, 4, args, gen)
    log.info("done: %d steps in %.1fs, val acc %.3f", args.steps, time.perf_counter() - t0, acc)


if __name__ == "__main__":
    main()
