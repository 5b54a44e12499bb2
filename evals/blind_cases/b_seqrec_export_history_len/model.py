import torch
import torch.nn as nn
import torch.nn.functional as F

import ops  # noqa: F401  (registers ranker:: ops)


class HistoryRanker(nn.Module):
    """Two-tower-ish ranker: candidate item vs. the user's recent history."""

    def __init__(self, n_items=5000, dim=64, topk=8, n_dense=12):
        super().__init__()
        self.topk = topk
        self.item_emb = nn.Embedding(n_items, dim, padding_idx=0)
        self.hist_proj = nn.Linear(dim, dim)
        self.cand_proj = nn.Linear(dim, dim)
        self.dense = nn.Sequential(nn.Linear(n_dense, dim), nn.ReLU(), nn.LayerNorm(dim))
        self.head = nn.Sequential(
            nn.Linear(4 * dim, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1)
        )

    def forward(self, hist_ids, cand_ids, dense):
        hist = self.hist_proj(self.item_emb(hist_ids))          # (B, L, D)
        cand = self.cand_proj(self.item_emb(cand_ids))          # (B, D)
        scores = torch.einsum("bld,bd->bl", hist, cand) / hist.shape[-1] ** 0.5
        scores = scores.masked_fill(hist_ids == 0, -1e4)
        pooled = torch.ops.ranker.topk_mean_pool(hist, scores, self.topk)
        mean_hist = (hist * (hist_ids != 0).unsqueeze(-1)).sum(1) / (hist_ids != 0).sum(1, keepdim=True).clamp(min=1)
        feats = torch.cat([pooled, mean_hist, cand, self.dense(dense)], dim=-1)
        return torch.sigmoid(self.head(feats)).squeeze(-1)
