"""A text classifier whose attention normalizes q and k with a LayerNorm built on every call (`nn.LayerNorm(d)(t)`)
inside the compiled forward, fullgraph=True: Dynamo's GB0264 at torch/nn/modules/normalization.py's __init__.
FIXED=1 uses the functional form, the same numbers with no parameters. (Blind A/B batch 64.)"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = os.environ.get("FIXED") == "1"
VARIANT = os.environ.get("VARIANT")   # "proj": the program's own module class built in forward; "lazy": built once


class Scale(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, t):
        return self.lin(t)


_lazy = {}


def qk_norm(t):
    if FIXED:
        return F.layer_norm(t, t.shape[-1:], eps=1e-6)
    if VARIANT == "proj":
        return Scale(t.shape[-1])(t)
    if VARIANT == "lazy":
        if "norm" not in _lazy:
            _lazy["norm"] = nn.LayerNorm(t.shape[-1], eps=1e-6)
        return _lazy["norm"](t)
    return nn.LayerNorm(t.shape[-1], eps=1e-6)(t)


class Attention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(qk_norm(q), qk_norm(k), v)
        return self.out(a.transpose(1, 2).reshape(b, t, d))


class Classifier(nn.Module):
    def __init__(self, vocab=500, dim=32, classes=5):
        super().__init__()
        self.emb, self.attn, self.head = nn.Embedding(vocab, dim), Attention(dim), nn.Linear(dim, classes)

    def forward(self, ids):
        x = self.emb(ids)
        return self.head((x + self.attn(x)).mean(1))


torch.manual_seed(0)
model = Classifier()
ids = torch.randint(0, 500, (8, 16))
if VARIANT == "lazy":   # (the compiled call first: it is the one that builds the norm)
    compiled = torch.compile(model, fullgraph=True)(ids)
    eager = model(ids)
else:
    eager = model(ids)
    compiled = torch.compile(model, fullgraph=True)(ids)
print(f"max |compiled - eager| = {(compiled - eager).abs().max().item():.2e}")
