"""Transformer encoder for multi-label ECG rhythm tagging (12-lead, 250 Hz, 10 s windows)."""
import math
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeadStem(nn.Module):
    """Strided conv stem: (B, 12, T) -> (B, T // 8, d_model)."""

    def __init__(self, n_leads: int, d_model: int):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv1d(n_leads, d_model // 2, 7, stride=2, padding=3),
            nn.GELU(),
            nn.Conv1d(d_model // 2, d_model, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv1d(d_model, d_model, 3, stride=2, padding=1),
        )

    def forward(self, x):
        return self.convs(x).transpose(1, 2)


def sinusoidal_positions(n: int, d: int) -> torch.Tensor:
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


class EncoderBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, ff_mult: int = 4, dropout: float = 0.1):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(
            nn.Linear(d_model, ff_mult * d_model), nn.GELU(), nn.Linear(ff_mult * d_model, d_model)
        )
        self.drop = nn.Dropout(dropout)

    def _prepare_mask(self, key_padding_mask):
        # Older checkpoints/pipelines passed 1.0/0.0 float masks (1 = valid frame).
        # Keep accepting them, but nudge callers towards the boolean convention.
        if key_padding_mask.dtype != torch.bool:
            warnings.warn(
                "float key_padding_mask is deprecated, pass a bool mask (True = padded frame)",
                DeprecationWarning,
            )
            key_padding_mask = key_padding_mask < 0.5
        # (B, T) -> (B, 1, 1, T) additive mask for SDPA
        return torch.zeros_like(key_padding_mask, dtype=torch.float32).masked_fill(
            key_padding_mask, float("-inf")
        )[:, None, None, :]

    def forward(self, x, key_padding_mask):
        B, T, D = x.shape
        attn_bias = self._prepare_mask(key_padding_mask)
        h = self.norm1(x)
        q, k, v = self.qkv(h).view(B, T, 3, self.n_heads, D // self.n_heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias)
        x = x + self.drop(self.proj(a.transpose(1, 2).reshape(B, T, D)))
        x = x + self.drop(self.ff(self.norm2(x)))
        return x


class ECGTagger(nn.Module):
    def __init__(self, n_leads=12, n_labels=27, d_model=128, n_heads=4, n_layers=6, max_frames=512):
        super().__init__()
        self.stem = LeadStem(n_leads, d_model)
        self.register_buffer("pos", sinusoidal_positions(max_frames, d_model), persistent=False)
        self.blocks = nn.ModuleList([EncoderBlock(d_model, n_heads) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_labels)

    def forward(self, signal, frame_mask):
        x = self.stem(signal)
        x = x + self.pos[: x.shape[1]]
        for blk in self.blocks:
            x = blk(x, frame_mask)
        x = self.norm(x)
        valid = (frame_mask > 0.5).float() if frame_mask.dtype != torch.bool else (~frame_mask).float()
        pooled = (x * valid[..., None]).sum(1) / valid.sum(1, keepdim=True).clamp_min(1.0)
        return self.head(pooled)
