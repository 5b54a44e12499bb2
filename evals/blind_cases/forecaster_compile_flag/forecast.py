import argparse
import logging
import os
import time
import torch
import torch.nn as nn
import torch.nn.functional as F

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("forecast")


class PatchTSTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.n2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, T, 3, self.heads, D // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.ff(self.n2(x))


class Forecaster(nn.Module):
    def __init__(self, context=512, patch=16, horizon=96, d=128, heads=4, depth=4):
        super().__init__()
        self.patch = patch
        self.embed = nn.Linear(patch, d)
        self.pos = nn.Parameter(torch.randn(1, context // patch, d) * 0.02)
        self.blocks = nn.ModuleList(PatchTSTBlock(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d * (context // patch), horizon)

    def forward(self, series):
        mu = series.mean(-1, keepdim=True)
        sd = series.std(-1, keepdim=True) + 1e-5
        x = (series - mu) / sd
        x = self.embed(x.unfold(-1, self.patch, self.patch)) + self.pos
        for blk in self.blocks:
            x = blk(x)
        y = self.head(self.norm(x).flatten(1))
        return y * sd + mu

    def load_checkpoint(self, path, torch_compile=False):
        state = torch.load(path, map_location="cpu", weights_only=True)
        self.load_state_dict(state)
        self.eval()
        if torch_compile:
            log.info("Compiling model...")
            self = torch.compile(self)


def synthetic_series(n, length, gen):
    t = torch.arange(length, dtype=torch.float32)
    period = torch.randint(12, 60, (n, 1), generator=gen).float()
    phase = torch.rand(n, 1, generator=gen) * 6.28
    trend = torch.randn(n, 1, generator=gen) * 0.01
    noise = 0.1 * torch.randn(n, length, generator=gen)
    return torch.sin(2 * 3.14159 * t / period + phase) + trend * t + noise


def benchmark(model, batches):
    times = []
    with torch.inference_mode():
        for b in batches:
            t = time.perf_counter()
            model(b)
            times.append(time.perf_counter() - t)
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/forecaster.pt")
    ap.add_argument("--batches", type=int, default=20)
    args = ap.parse_args()

    if not os.path.exists(args.ckpt):
        os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
        torch.manual_seed(0)
        torch.save(Forecaster().state_dict(), args.ckpt)

    gen = torch.Generator().manual_seed(0)
    batches = [synthetic_series(64, 512, gen) for _ in range(args.batches)]

    for flag in (False, True):
        model = Forecaster()
        model.load_checkpoint(args.ckpt, torch_compile=flag)
        times = benchmark(model, batches)
        steady = sorted(times[3:])[len(times[3:]) // 2]
        print(f"torch_compile={flag!s:5}  first batch {times[0] * 1e3:7.1f} ms  median {steady * 1e3:6.1f} ms/batch")


if __name__ == "__main__":
    main()
