"""News feed ranker: content relevance x freshness."""
import math
import time

import torch
import torch.nn as nn

N_TOKENS = 20000
N_SECTIONS = 32


class FreshnessRanker(nn.Module):
    def __init__(self, d=96, half_life_h=6.0):
        super().__init__()
        self.title = nn.EmbeddingBag(N_TOKENS, d, mode="mean")
        self.section = nn.Embedding(N_SECTIONS, d)
        self.user = nn.Sequential(nn.Linear(64, d), nn.ReLU(), nn.Linear(d, d))
        self.mlp = nn.Sequential(nn.Linear(3 * d + 2, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))
        self.half_life_s = half_life_h * 3600.0
        self.log2 = math.log(2.0)

    def freshness(self, published_ts):
        # published_ts: float64 unix seconds
        age_s = (time.time() - published_ts).clamp(min=0.0)
        decay = torch.exp(-self.log2 * age_s / self.half_life_s)
        return decay.float(), torch.log1p(age_s / 3600.0).float()

    def forward(self, title_ids, title_offsets, section_id, user_feats, published_ts):
        t = self.title(title_ids, title_offsets)
        s = self.section(section_id)
        u = self.user(user_feats)
        decay, log_age = self.freshness(published_ts)
        x = torch.cat([t, s, u * t, decay[:, None], log_age[:, None]], dim=-1)
        relevance = torch.sigmoid(self.mlp(x).squeeze(-1))
        return relevance * decay
