"""Small ViT on synthetic 32x32 images, with stochastic depth (LayerDrop).

    python train_vit.py              # compiled
    python train_vit.py --fullgraph  # compiled, error on any graph break
    python train_vit.py --eager
"""
import argparse
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim, heads, drop_path):
        super().__init__()
        self.drop_path = drop_path
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        # stochastic depth: skip the whole block with probability drop_path
        if self.training and random.random() < self.drop_path:
            return x
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    def __init__(self, img=32, patch=4, dim=64, depth=6, heads=4, ncls=10, drop_path=0.2):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (img // patch) ** 2
        self.pos = nn.Parameter(torch.zeros(1, n + 1, dim))
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        # linearly increasing drop rate, as in DeiT / Swin
        rates = [drop_path * i / (depth - 1) for i in range(depth)]
        self.blocks = nn.ModuleList(Block(dim, heads, r) for r in rates)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, ncls)
        nn.init.trunc_normal_(self.pos, std=0.02)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], 1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x[:, 0]))


def synthetic_batch(bs, gen):
    y = torch.randint(0, 10, (bs,), generator=gen)
    x = torch.randn(bs, 3, 32, 32, generator=gen) * 0.5
    # class-dependent colour blob so the task is learnable
    x[:, y % 3, 8:24, 8:24] += (y[:, None, None].float() / 5.0)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--fullgraph", action="store_true", help="fail loudly on graph breaks")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--bs", type=int, default=16)
    args = ap.parse_args()

    random.seed(0)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = ViT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05)
    step_model = model if args.eager else torch.compile(model, fullgraph=args.fullgraph)

    model.train()
    times = []
    for step in range(1, args.steps + 1):
        x, y = synthetic_batch(args.bs, gen)
        t = time.perf_counter()
        loss = F.cross_entropy(step_model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t)
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.3f}  step_time {times[-1] * 1000:.0f} ms", flush=True)
    steady = sorted(times[-20:])[len(times[-20:]) // 2]
    print(f"first step {times[0]:.1f}s, median steady step {steady * 1000:.0f} ms")


if __name__ == "__main__":
    main()
