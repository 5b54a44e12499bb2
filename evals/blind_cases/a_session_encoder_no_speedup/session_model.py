import math

import torch
import torch.nn as nn


class SessionEncoder(nn.Module):
    """Encodes a padded click session into a user vector for next-item retrieval.

    Attention uses ALiBi-style distance penalties plus a learned bias on the
    log time gap between clicks, so the block is written out by hand instead of
    using nn.TransformerEncoderLayer.
    """

    def __init__(self, n_items=20000, d_model=64, n_heads=4, n_layers=3, max_len=256):
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.max_len = max_len
        self.item_emb = nn.Embedding(n_items, d_model, padding_idx=0)
        self.gap_proj = nn.Linear(1, n_heads)
        self.qkv = nn.ModuleList(nn.Linear(d_model, 3 * d_model) for _ in range(n_layers))
        self.out = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(n_layers))
        self.norm1 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.norm2 = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.ffn = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
            for _ in range(n_layers)
        )
        self.final_norm = nn.LayerNorm(d_model)
        slopes = torch.tensor([2.0 ** (-8.0 * (i + 1) / n_heads) for i in range(n_heads)])
        self.register_buffer("slopes", slopes, persistent=False)

    def forward(self, items, timestamps, lengths=None):
        # items: (B, T) int64 item ids, 0 = padding
        # timestamps: (B, T) float seconds since session start
        # lengths: (B,) number of valid clicks per session, or None for full sessions
        try:
            T = int(lengths.max())
        except AttributeError:
            T = items.shape[1]
        items = items[:, :T]
        timestamps = timestamps[:, :T]
        B = items.shape[0]

        if lengths is None:
            keep = torch.ones(B, T, dtype=torch.bool, device=items.device)
        else:
            keep = torch.arange(T, device=items.device)[None, :] < lengths[:, None]

        x = self.item_emb(items) * math.sqrt(self.d_model)

        pos = torch.arange(T, device=items.device)
        dist = (pos[None, :] - pos[:, None]).abs().float()
        gap = (timestamps[:, :, None] - timestamps[:, None, :]).abs()
        gap_bias = self.gap_proj(torch.log1p(gap).unsqueeze(-1)).permute(0, 3, 1, 2)
        bias = gap_bias - dist * self.slopes[:, None, None]
        bias = bias.masked_fill(~keep[:, None, None, :], float("-inf"))

        head_dim = self.d_model // self.n_heads
        for qkv, out, norm1, norm2, ffn in zip(self.qkv, self.out, self.norm1, self.norm2, self.ffn):
            q, k, v = qkv(norm1(x)).view(B, T, 3, self.n_heads, head_dim).permute(2, 0, 3, 1, 4)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(head_dim) + bias
            attn = torch.softmax(scores, dim=-1)
            ctx = (attn @ v).transpose(1, 2).reshape(B, T, self.d_model)
            x = x + out(ctx)
            x = x + ffn(norm2(x))

        x = self.final_norm(x)
        w = keep.unsqueeze(-1).to(x.dtype)
        user_vec = (x * w).sum(1) / w.sum(1).clamp_min(1.0)
        return torch.nn.functional.normalize(user_vec, dim=-1)
