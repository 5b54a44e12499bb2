"""Candidate ranker used by the feed service.

Inputs come from the feature store as a dict of dense float tensors:
    user_emb  [B, 32]  user tower embedding (precomputed nightly)
    item_emb  [B, 32]  item tower embedding (precomputed nightly)
    context   [B, 8]   request context features (hour, device, ...)
"""
import torch
import torch.nn as nn

EMB_DIM = 32
CTX_DIM = 8

FEATURE_SPECS = {
    "user_emb": EMB_DIM,
    "item_emb": EMB_DIM,
    "context": CTX_DIM,
}


class CrossLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Linear(dim, dim)

    def forward(self, x0, x):
        return x0 * self.w(x) + x


class FeedRanker(nn.Module):
    def __init__(self, hidden=128, n_cross=2):
        super().__init__()
        in_dim = 2 * EMB_DIM + EMB_DIM + CTX_DIM
        self.user_proj = nn.Linear(EMB_DIM, EMB_DIM)
        self.item_proj = nn.Linear(EMB_DIM, EMB_DIM)
        self.ctx_norm = nn.LayerNorm(CTX_DIM)
        self.cross = nn.ModuleList([CrossLayer(in_dim) for _ in range(n_cross)])
        self.mlp = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.GELU(),
            nn.Linear(hidden, hidden // 2), nn.GELU(),
            nn.Linear(hidden // 2, 1),
        )

    def forward(self, feats):
        u = self.user_proj(feats["user_emb"])
        i = self.item_proj(feats["item_emb"])
        c = self.ctx_norm(feats["context"])
        x0 = torch.cat([u, i, u * i, c], dim=-1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return self.mlp(x).squeeze(-1)


def planted_logit(user, item, ctx):
    w_user = torch.linspace(-1.0, 1.0, EMB_DIM)
    return (user * item).sum(-1) / 4 + 0.8 * (user * w_user).sum(-1) / 4 + 0.5 * ctx[:, 0]


def synthetic_batch(n, seed):
    """Synthetic traffic with a planted user/item affinity so AUC means something."""
    g = torch.Generator().manual_seed(seed)
    user = torch.randn(n, EMB_DIM, generator=g)
    item = torch.randn(n, EMB_DIM, generator=g)
    ctx = torch.randn(n, CTX_DIM, generator=g)
    logit = planted_logit(user, item, ctx)
    label = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    feats = {"user_emb": user, "item_emb": item, "context": ctx}
    return feats, label


def auc(scores, labels):
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    pos = labels > 0.5
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()
