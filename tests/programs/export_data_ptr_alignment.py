"""A small encoder exported for CPU serving whose RMSNorm aligns its input for a fused GPU kernel before it looks at
the device: `x.data_ptr() % 16` runs on the CPU path too, and torch.export traces forward with fake tensors (no
address): "Cannot access data pointer of Tensor (e.g. FakeTensor...)". FIXED=1 aligns only on the kernel's branch.
(Blind A/B batch 64: torch's message says to wrap a custom kernel in a custom op; no kernel is traced here.)"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = os.environ.get("FIXED") == "1"
_fused_rms_norm = None   # the GPU build's kernel (absent on CPU)


def _aligned(x, alignment=16):
    return x if x.data_ptr() % alignment == 0 else x.clone()


def _rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        if FIXED:
            if x.is_cuda and _fused_rms_norm is not None:
                return _fused_rms_norm(_aligned(x.contiguous()), self.weight, self.eps)
            return _rms_norm(x, self.weight, self.eps)
        x = _aligned(x.contiguous())
        if x.is_cuda and _fused_rms_norm is not None:
            return _fused_rms_norm(x, self.weight, self.eps)
        return _rms_norm(x, self.weight, self.eps)


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.up, self.down = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Scorer(nn.Module):
    def __init__(self, vocab=1000, dim=64, heads=4, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm, self.head = RMSNorm(dim), nn.Linear(dim, 1)

    def forward(self, ids):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0]).squeeze(-1)


torch.manual_seed(0)
model = Scorer().eval()
ids = torch.randint(0, 1000, (4, 32))
batch = torch.export.Dim("batch", min=1, max=64)
ep = torch.export.export(model, (ids,), dynamic_shapes=({0: batch},))
with torch.no_grad():
    diff = (ep.module()(ids) - model(ids)).abs().max().item()
print(f"export ok, max |exported - eager| = {diff:.2e}")
