"""Rotary-position sentence encoder used by the on-device retrieval index."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from config import EncoderConfig


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim: int, initial_len: int, theta: float):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._build_cache(initial_len)

    def _build_cache(self, seq_len: int):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype, device=self.inv_freq.device)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, seq_len: int):
        if seq_len > self.max_seq_len_cached:
            self._build_cache(seq_len)
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class SelfAttention(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.h = cfg.num_heads
        self.d = cfg.hidden_size // cfg.num_heads
        self.qkv = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.o = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x, cos, sin, key_padding_mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        attn_mask = key_padding_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.o(y.transpose(1, 2).reshape(B, T, C))


class Layer(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.n1 = nn.LayerNorm(cfg.hidden_size)
        self.attn = SelfAttention(cfg)
        self.n2 = nn.LayerNorm(cfg.hidden_size)
        self.ff = nn.Sequential(nn.Linear(cfg.hidden_size, cfg.intermediate_size), nn.GELU(),
                                nn.Linear(cfg.intermediate_size, cfg.hidden_size))

    def forward(self, x, cos, sin, mask):
        x = x + self.attn(self.n1(x), cos, sin, mask)
        return x + self.ff(self.n2(x))


class SentenceEncoder(nn.Module):
    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.rotary = RotaryEmbedding(cfg.hidden_size // cfg.num_heads,
                                      cfg.rope_initial_cache_len, cfg.rope_theta)
        self.layers = nn.ModuleList([Layer(cfg) for _ in range(cfg.num_layers)])
        self.norm = nn.LayerNorm(cfg.hidden_size)
        self.proj = nn.Linear(cfg.hidden_size, cfg.embed_dim)

    def forward(self, input_ids, attention_mask):
        T = input_ids.shape[1]
        cos, sin = self.rotary(T)
        mask = attention_mask.bool()
        x = self.embed(input_ids)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        x = self.norm(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return F.normalize(self.proj(pooled), dim=-1)
