import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from rowops import l2_normalize_rows


class BagEncoder(nn.Module):
    """Bag-of-tokens dual encoder tower (shared between queries and documents)."""

    def __init__(self, vocab_size=8192, dim=256, hidden=512, out_dim=128, init_scale=1 / 0.07):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.ff = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Linear(hidden, dim),
        )
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, out_dim)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(init_scale)))
        self.conf = nn.Linear(1, 1)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = self.norm(h + self.ff(h))
        z = self.proj(h).contiguous()
        lengths = l2_normalize_rows(z)
        # split the temperature evenly between the two towers so that q @ d.T
        # comes out already scaled by logit_scale
        emb = z * self.logit_scale.exp().sqrt()
        confidence = torch.sigmoid(self.conf(torch.log(lengths).unsqueeze(-1))).squeeze(-1)
        return emb, confidence
