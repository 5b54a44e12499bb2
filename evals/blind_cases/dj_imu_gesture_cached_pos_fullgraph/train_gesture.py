"""Train a small transformer gesture classifier on windowed IMU data.

Usage:
    python train_gesture.py --steps 30 --compile --fullgraph
"""
import argparse
import functools
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("gesture")


class PatchStem(nn.Module):
    """Turns a (B, T, C) IMU window into (B, T // patch, d_model) tokens."""

    def __init__(self, in_ch: int, d_model: int, patch: int):
        super().__init__()
        self.proj = nn.Conv1d(in_ch, d_model, kernel_size=patch, stride=patch)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        x = self.proj(x.transpose(1, 2)).transpose(1, 2)
        return self.norm(x)


class SelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0
        )
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d_model: int, n_heads: int, mlp_ratio: int, dropout: float):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, mlp_ratio * d_model),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(mlp_ratio * d_model, d_model),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GestureTransformer(nn.Module):
    def __init__(self, in_ch=6, window=256, patch=8, d_model=128, n_heads=4,
                 depth=4, mlp_ratio=4, n_classes=12, dropout=0.1):
        super().__init__()
        self.n_tokens = window // patch
        self.d_model = d_model
        self.stem = PatchStem(in_ch, d_model, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))
        self.blocks = nn.ModuleList(
            [Block(d_model, n_heads, mlp_ratio, dropout) for _ in range(depth)]
        )
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)
        nn.init.trunc_normal_(self.cls, std=0.02)

    @functools.cached_property
    def pos_table(self) -> torch.Tensor:
        n = self.n_tokens + 1
        pos = torch.arange(n, dtype=torch.float32)[:, None]
        div = torch.exp(torch.arange(0, self.d_model, 2, dtype=torch.float32)
                        * (-math.log(10000.0) / self.d_model))
        table = torch.zeros(n, self.d_model)
        table[:, 0::2] = torch.sin(pos * div)
        table[:, 1::2] = torch.cos(pos * div)
        return table[None]

    def forward(self, x):
        tokens = self.stem(x)
        cls = self.cls.expand(tokens.shape[0], -1, -1)
        h = torch.cat([cls, tokens], dim=1) + self.pos_table.to(tokens.dtype)
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.norm(h[:, 0]))


def synthetic_batch(batch_size, window, in_ch, n_classes, gen):
    """Class-dependent sinusoids plus noise, standing in for the IMU loader."""
    labels = torch.randint(0, n_classes, (batch_size,), generator=gen)
    t = torch.linspace(0, 1, window)[None, :, None]
    freq = (labels.float() + 1.0)[:, None, None] * 2.0
    phase = torch.rand(batch_size, 1, in_ch, generator=gen) * 6.28
    x = torch.sin(2 * math.pi * freq * t + phase)
    x = x + 0.3 * torch.randn(batch_size, window, in_ch, generator=gen)
    return x, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true",
                   help="fail fast on graph breaks (CI setting)")
    p.add_argument("--sanity-check", action="store_true",
                   help="run one eager forward on a dummy batch before training")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    in_ch, n_classes = 6, 12
    model = GestureTransformer(in_ch=in_ch, window=args.window, n_classes=n_classes)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model: %.2fM params, %d tokens", n_params / 1e6, model.n_tokens)

    if args.sanity_check:
        with torch.no_grad():
            out = model(torch.zeros(2, args.window, in_ch))
        log.info("sanity check ok: output %s", tuple(out.shape))

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    step_fn = model
    if args.compile:
        step_fn = torch.compile(model, fullgraph=args.fullgraph)
        log.info("compiled model (fullgraph=%s)", args.fullgraph)

    model.train()
    times = []
    for step in range(1, args.steps + 1):
        x, y = synthetic_batch(args.batch_size, args.window, in_ch, n_classes, gen)
        t0 = time.perf_counter()
        logits = step_fn(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if step == 1 or step % 10 == 0:
            acc = (logits.argmax(-1) == y).float().mean().item()
            log.info("step %d loss %.4f acc %.3f step_time %.1f ms",
                     step, loss.item(), acc, times[-1] * 1e3)

    steady = times[5:] if len(times) > 5 else times
    log.info("first step %.2f s, steady-state %.1f ms/step",
             times[0], 1e3 * sum(steady) / len(steady))


if __name__ == "__main__":
    main()
