"""Batch embedding service: encodes query token batches with a small rotary transformer."""
import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from fused_ops import rms_norm, rotary, swiglu

VOCAB, D, HEADS, LAYERS, FF = 8000, 256, 4, 4, 768


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = RMSNorm(D)
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.proj = nn.Linear(D, D, bias=False)
        self.n2 = RMSNorm(D)
        self.gate_up = nn.Linear(D, 2 * FF, bias=False)
        self.down = nn.Linear(FF, D, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, D))
        return x + self.down(swiglu(self.gate_up(self.n2(x))))


class Encoder(nn.Module):
    def __init__(self, max_len=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.norm = RMSNorm(D)
        inv = 1.0 / (10000 ** (torch.arange(0, D // HEADS, 2).float() / (D // HEADS)))
        ang = torch.outer(torch.arange(max_len).float(), inv)
        self.register_buffer("cos", torch.cat([ang.cos(), ang.cos()], -1), persistent=False)
        self.register_buffer("sin", torch.cat([ang.sin(), ang.sin()], -1), persistent=False)

    def forward(self, ids, attn):
        t = ids.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        mask = attn[:, None, None, :].bool()
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        x = self.norm(x)
        pooled = (x * attn[..., None]).sum(1) / attn.sum(1, keepdim=True)
        return F.normalize(pooled, dim=-1)


def make_batches(n_batches, bs, t, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n_batches):
        ids = torch.randint(1, VOCAB, (bs, t), generator=g)
        lens = torch.randint(t // 2, t + 1, (bs,), generator=g)
        attn = (torch.arange(t)[None, :] < lens[:, None]).long()
        out.append((ids * attn, attn))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--batches", type=int, default=40)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = Encoder().eval()
    enc = model if args.no_compile else torch.compile(model)
    batches = make_batches(args.batches, 32, 64)
    times = []
    checksum = 0.0
    with torch.inference_mode():
        t0 = time.perf_counter()
        enc(*batches[0])
        print(f"warmup batch: {time.perf_counter() - t0:.1f}s")
        for ids, attn in batches:
            t0 = time.perf_counter()
            emb = enc(ids, attn)
            times.append(1000 * (time.perf_counter() - t0))
            checksum += emb[:, :8].sum().item()
    print(f"median batch latency {statistics.median(times):.1f} ms  (p90 {sorted(times)[int(0.9 * len(times))]:.1f} ms)")
    print(f"embedding checksum {checksum:.4f}")


if __name__ == "__main__":
    main()
