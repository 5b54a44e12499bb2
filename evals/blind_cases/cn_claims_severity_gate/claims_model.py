"""Claim-severity regressor: categorical embeddings + numeric tower + MLP head."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAT_CARDINALITIES = {"region": 12, "vehicle_class": 9, "policy_tier": 4, "channel": 6, "occupation": 20}
NUM_FEATURES = 14


class NumericTower(nn.Module):
    """Per-feature affine standardisation followed by a small MLP.

    A bit of multiplicative jitter on the standardised inputs acts as a
    regulariser against the heavy-tailed numeric columns (claim history etc.).
    """

    def __init__(self, n_features, hidden, jitter=0.15):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))
        self.jitter = jitter
        self.proj = nn.Sequential(nn.Linear(n_features, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def forward(self, x):
        z = (x - self.mean) / self.std
        # only regularise when we are building a graph for backprop
        if torch.is_grad_enabled() and self.jitter > 0:
            z = z * (1.0 + self.jitter * torch.randn_like(z))
        return self.proj(z)


class ClaimSeverityModel(nn.Module):
    def __init__(self, emb_dim=16, hidden=128, n_layers=3, dropout=0.1):
        super().__init__()
        self.embeddings = nn.ModuleDict({k: nn.Embedding(v, emb_dim) for k, v in CAT_CARDINALITIES.items()})
        self.numeric = NumericTower(NUM_FEATURES, hidden)
        d_in = emb_dim * len(CAT_CARDINALITIES) + hidden
        layers = []
        for _ in range(n_layers):
            layers += [nn.Linear(d_in, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout)]
            d_in = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, 2)  # log-severity mean, log-scale

    def forward(self, cats, nums):
        embs = [self.embeddings[k](cats[:, i]) for i, k in enumerate(CAT_CARDINALITIES)]
        h = torch.cat(embs + [self.numeric(nums)], dim=-1)
        out = self.head(self.body(h))
        mu, log_scale = out.unbind(-1)
        return mu, log_scale.clamp(-5.0, 3.0)


def gaussian_nll(mu, log_scale, target):
    return (log_scale + 0.5 * ((target - mu) / log_scale.exp()) ** 2 + 0.5 * math.log(2 * math.pi)).mean()
