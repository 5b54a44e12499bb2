"""Small sentence encoder used by the embedding service (random init for the load test)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        bias = (~mask)[:, None, None, :].to(x.dtype) * -1e4
        att = (q @ k.transpose(-1, -2)) / math.sqrt(d // self.heads) + bias
        y = att.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class SentenceEncoder(nn.Module):
    def __init__(self, vocab=8000, dim=128, depth=2, heads=4, hidden=256, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, hidden) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)
        # whitening statistics estimated offline on the corpus (random here)
        self.register_buffer("white_mu", torch.randn(dim) * 0.1)
        self.register_buffer("white_w", torch.eye(dim) + 0.05 * torch.randn(dim, dim))

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.ln(x)


def embed_batch(model, ids, mask, cls_pooling, center, whiten, normalize, binarize):
    """Encode a padded batch and apply the per-request post-processing options."""
    h = model(ids, mask)
    if cls_pooling:
        e = h[:, 0]
    else:
        m = mask.unsqueeze(-1).to(h.dtype)
        e = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
    if center:
        e = e - model.white_mu
    if whiten:
        e = e @ model.white_w
    if normalize:
        e = F.normalize(e, dim=-1)
    if binarize:
        e = (e > 0).to(e.dtype) * 2 - 1
    return e
