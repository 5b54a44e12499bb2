"""Small per-locale intent classifier used by the routing service."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, ff_mult: int = 4, dropout: float = 0.1):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ff_mult * dim), nn.GELU(), nn.Linear(ff_mult * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_bias):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=key_bias)
        x = x + self.drop(self.proj(att.transpose(1, 2).reshape(b, t, d)))
        x = x + self.drop(self.ff(self.norm2(x)))
        return x


class IntentClassifier(nn.Module):
    def __init__(self, vocab: int = 8000, dim: int = 128, heads: int = 4, layers: int = 4,
                 max_len: int = 64, n_intents: int = 24):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, max_len, dim) / math.sqrt(dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_intents)

    def forward(self, input_ids, attention_mask):
        t = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos[:, :t]
        keep = attention_mask.to(x.dtype)
        key_bias = (1.0 - keep)[:, None, None, :] * -1e4
        for blk in self.blocks:
            x = blk(x, key_bias)
        x = self.norm(x)
        pooled = (x * keep[..., None]).sum(1) / keep.sum(1, keepdim=True).clamp_min(1.0)
        return self.head(pooled).log_softmax(-1)
