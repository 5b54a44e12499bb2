"""Small NomicBERT-style encoder with rotary position embeddings, used for
contrastive fine-tuning of a sentence embedder."""
import math
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class RotaryEmbedding(nn.Module):
    def __init__(self, dim: int, base: float = 10000.0, pos_idx_in_fp32: bool = True):
        super().__init__()
        self.dim = dim
        self.base = base
        self.pos_idx_in_fp32 = pos_idx_in_fp32
        self.register_buffer("inv_freq", self._compute_inv_freq(), persistent=False)
        self._seq_len_cached = 0
        self._cos_cached = None
        self._sin_cached = None

    def _compute_inv_freq(self, device=None):
        return 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=device, dtype=torch.float32) / self.dim))

    def _update_cos_sin_cache(self, seqlen: int, device=None, dtype=None):
        # Reset the tables if the sequence length has changed,
        # if we're on a new device (possibly due to tracing for instance),
        # or if we're switching from inference mode to training
        if (
            seqlen > self._seq_len_cached
            or self._cos_cached is None
            or self._cos_cached.device != device
            or self._cos_cached.dtype != dtype
            or (self.training and self._cos_cached.is_inference())
        ):
            self._seq_len_cached = seqlen
            t = torch.arange(seqlen, device=device, dtype=torch.float32)
            freqs = torch.outer(t, self.inv_freq.to(torch.float32))
            self._cos_cached = torch.cos(freqs).to(dtype)
            self._sin_cached = torch.sin(freqs).to(dtype)

    def forward(self, q: torch.Tensor, k: torch.Tensor):
        # q, k: (batch, seqlen, heads, head_dim)
        seqlen = q.shape[1]
        self._update_cos_sin_cache(seqlen, device=q.device, dtype=q.dtype)
        cos = self._cos_cached[:seqlen][None, :, None, :]
        sin = self._sin_cached[:seqlen][None, :, None, :]
        return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)


def apply_rotary(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    rotated = torch.cat((-x2, x1), dim=-1)
    cos = torch.cat((cos, cos), dim=-1)
    sin = torch.cat((sin, sin), dim=-1)
    return x * cos + rotated * sin


class Attention(nn.Module):
    def __init__(self, hidden: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.Wqkv = nn.Linear(hidden, 3 * hidden)
        self.out_proj = nn.Linear(hidden, hidden)
        self.rotary = RotaryEmbedding(self.head_dim)
        self.dropout = dropout

    def forward(self, x, attn_mask):
        b, s, _ = x.shape
        qkv = self.Wqkv(x).view(b, s, 3, self.heads, self.head_dim)
        q, k, v = qkv.unbind(dim=2)
        q, k = self.rotary(q, k)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0
        )
        return self.out_proj(out.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    def __init__(self, hidden, heads, mlp_ratio=4, dropout=0.0):
        super().__init__()
        self.attn = Attention(hidden, heads, dropout)
        self.norm1 = nn.LayerNorm(hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc11 = nn.Linear(hidden, mlp_ratio * hidden)
        self.fc12 = nn.Linear(hidden, mlp_ratio * hidden)
        self.fc2 = nn.Linear(mlp_ratio * hidden, hidden)

    def forward(self, x, attn_mask):
        x = self.norm1(x + self.attn(x, attn_mask))
        h = F.silu(self.fc11(x)) * self.fc12(x)  # SwiGLU
        return self.norm2(x + self.fc2(h))


class NomicStyleEncoder(nn.Module):
    def __init__(self, vocab_size=8192, hidden=128, layers=4, heads=4, dropout=0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden, padding_idx=0)
        self.emb_norm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList([Block(hidden, heads, dropout=dropout) for _ in range(layers)])

    def forward(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor] = None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        x = self.emb_norm(self.embed(input_ids))
        mask = attention_mask[:, None, None, :].to(torch.bool)
        for layer in self.layers:
            x = layer(x, mask)
        # mean pooling
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return F.normalize(pooled, dim=-1)
