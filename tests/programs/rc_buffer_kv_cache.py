"""Greedy decoding with a tiny attention layer whose key/value cache is a registered buffer grown with torch.cat
every step: Dynamo keeps buffer shapes static (force_parameter_static_shapes), so each new cache length
recompiles, up to recompile_limit, dynamic=True included (blind A/B batch 42, a tiny LM's sampler).
  --prealloc   the cache allocated at its largest length and written in place with a mask (the fix)"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_LEN, DIM = 24, 16


class CachedAttention(nn.Module):
    def __init__(self, prealloc):
        super().__init__()
        self.qkv, self.prealloc = nn.Linear(DIM, 3 * DIM), prealloc
        n = MAX_LEN if prealloc else 0
        self.register_buffer("k_cache", torch.zeros(1, n, DIM), persistent=False)
        self.register_buffer("v_cache", torch.zeros(1, n, DIM), persistent=False)

    def forward(self, x, pos):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if self.prealloc:
            self.k_cache.index_copy_(1, pos, k)
            self.v_cache.index_copy_(1, pos, v)
            mask = torch.arange(MAX_LEN) <= pos
            return F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        self.k_cache = torch.cat([self.k_cache, k], dim=1)
        self.v_cache = torch.cat([self.v_cache, v], dim=1)
        return F.scaled_dot_product_attention(q, self.k_cache, self.v_cache)


torch.manual_seed(0)
layer = CachedAttention("--prealloc" in sys.argv).eval()
step = torch.compile(layer, dynamic=True)
x = torch.randn(1, 1, DIM)
with torch.no_grad():
    for t in range(12):
        x = step(x, torch.tensor([t]))
print(f"decoded 12 steps, last norm {x.norm():.4f}")
