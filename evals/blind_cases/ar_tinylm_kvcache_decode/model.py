"""Small decoder-only LM with an incremental key/value cache for fast sampling."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LMConfig:
    vocab_size: int = 4096
    max_seq_len: int = 256
    d_model: int = 256
    n_heads: int = 4
    n_layers: int = 4
    mlp_ratio: int = 4
    dropout: float = 0.0


class CachedSelfAttention(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        # running key/value history for incremental decoding
        self.register_buffer("k_cache", torch.zeros(1, cfg.n_heads, 0, self.head_dim), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, cfg.n_heads, 0, self.head_dim), persistent=False)

    def reset_cache(self, batch_size: int):
        shape = (batch_size, self.n_heads, 0, self.head_dim)
        self.k_cache = self.qkv.weight.new_zeros(shape)
        self.v_cache = self.qkv.weight.new_zeros(shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

        self.k_cache = torch.cat([self.k_cache, k], dim=2)
        self.v_cache = torch.cat([self.v_cache, v], dim=2)

        # causal only matters for the prompt pass; single-token steps see the whole history
        out = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, is_causal=T > 1)
        out = out.transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CachedSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model),
            nn.GELU(approximate="tanh"),
            nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model),
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class TinyLM(nn.Module):
    def __init__(self, cfg: LMConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_seq_len, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def reset_cache(self, batch_size: int):
        for blk in self.blocks:
            blk.attn.reset_cache(batch_size)

    def forward(self, idx: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.tok_emb(idx) + self.pos_emb(positions)
        for blk in self.blocks:
            x = blk(x)
        return self.lm_head(self.ln_f(x))

    def num_params(self):
        return sum(p.numel() for p in self.parameters())
