"""Small transformer encoder that tags shopping search queries with a product category."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CATEGORIES = ["electronics", "grocery", "apparel", "home", "toys", "sports"]
VOCAB_SIZE = 512
PAD_ID = 0


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, key_bias):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        if key_bias is not None:
            att = att + key_bias
        out = att.softmax(-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, key_bias):
        x = x + self.attn(self.ln1(x), key_bias)
        return x + self.mlp(self.ln2(x))


class QueryTagger(nn.Module):
    def __init__(self, dim=96, heads=4, layers=3, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(VOCAB_SIZE, dim, padding_idx=PAD_ID)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, len(CATEGORIES))

    def forward(self, input_ids, attention_mask=None):
        t = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos(torch.arange(t, device=input_ids.device))
        key_bias = None
        if attention_mask is not None:
            key_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for blk in self.blocks:
            x = blk(x, key_bias)
        x = self.norm(x)
        if attention_mask is None:
            pooled = x.mean(1)
        else:
            m = attention_mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return F.log_softmax(self.head(pooled), dim=-1)


def build_model(seed=0):
    torch.manual_seed(seed)
    model = QueryTagger()
    # stand-in for the trained weights: scale the head so the scores are not flat
    with torch.no_grad():
        model.head.weight.mul_(8.0)
    return model.eval()
