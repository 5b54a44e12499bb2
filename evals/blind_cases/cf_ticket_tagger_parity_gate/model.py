import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, n_heads, ff_mult=4, dropout=0.1):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff_mult * d), nn.GELU(), nn.Linear(ff_mult * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, pad_mask):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))
        attn_mask = pad_mask[:, None, None, :]  # True = attend
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                           dropout_p=self.drop.p if self.training else 0.0)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(B, T, D)))
        return x + self.drop(self.ff(self.ln2(x)))


class TicketTagger(nn.Module):
    """Shared encoder + one classification head per routing task."""

    def __init__(self, vocab_size=4000, d=128, n_layers=2, n_heads=4, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(max_len, d) / math.sqrt(d))
        self.blocks = nn.ModuleList(Block(d, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.d = d
        self.heads = {}

    def add_task(self, name, n_labels, hidden=64):
        self.heads[name] = nn.Sequential(nn.Linear(self.d, hidden), nn.Tanh(), nn.Linear(hidden, n_labels))
        return self

    def forward(self, ids):
        pad_mask = ids != 0
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.ln_f(x)
        m = pad_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return {name: head(pooled) for name, head in self.heads.items()}


TASKS = {"queue": 12, "priority": 4, "sentiment": 3}


def build_model(**kw):
    m = TicketTagger(**kw)
    for name, n in TASKS.items():
        m.add_task(name, n)
    return m
