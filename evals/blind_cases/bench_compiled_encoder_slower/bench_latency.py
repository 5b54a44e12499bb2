"""Latency benchmark for the reranker encoder: eager vs torch.compile.

Used to decide whether we turn on torch.compile in the CPU serving image.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)

    def forward(self, x, key_bias):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads) + key_bias
        h = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(h)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x


class Reranker(nn.Module):
    def __init__(self, vocab=8000, d=128, heads=4, ff=512, layers=4, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.score = nn.Linear(d, 1)

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        key_bias = (1.0 - mask[:, None, None, :].float()) * -1e4
        for blk in self.blocks:
            x = blk(x, key_bias)
        x = self.ln(x[:, 0])
        return self.score(x).squeeze(-1)


def timed(fn, ids, mask, iters):
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn(ids, mask)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.mean(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = Reranker().eval()
    ids = torch.randint(0, 8000, (8, 96))
    mask = torch.ones(8, 96, dtype=torch.long)
    mask[4:, 70:] = 0

    # eager baseline
    for _ in range(args.warmup):
        model(ids, mask)
    e_mean, e_med = timed(model, ids, mask, args.iters)

    compiled = torch.compile(model)
    # warm-up: trigger compilation outside the timed region
    t0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(args.warmup):
            compiled(ids, mask)
    print(f"compile+warmup took {time.perf_counter() - t0:.1f}s")
    c_mean, c_med = timed(compiled, ids, mask, args.iters)

    with torch.no_grad():
        diff = (model(ids, mask) - compiled(ids, mask)).abs().max().item()
    print(f"eager    : mean {e_mean:8.2f} ms  median {e_med:6.2f} ms")
    print(f"compiled : mean {c_mean:8.2f} ms  median {c_med:6.2f} ms")
    print(f"max |diff| = {diff:.2e}")
    print(f"speedup (mean) = {e_mean / c_mean:.2f}x")


if __name__ == "__main__":
    main()
