"""Click-through-rate ranker used by the feed service.

Continuous features are discretised into fixed-width buckets and embedded; categorical
features go through their own embedding tables; a small MLP scores the concatenation.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass(frozen=True)
class BucketSpec:
    name: str
    width: float  # bucket width in the feature's natural unit
    num_buckets: int


# Widths mirror the feature store's logging resolution (values arrive rounded to these steps).
CONTINUOUS_FEATURES = (
    BucketSpec("session_minutes", 0.5, 64),
    BucketSpec("watch_ratio", 0.1, 11),
    BucketSpec("price_usd", 2.5, 80),
    BucketSpec("hours_since_visit", 0.2, 120),
)
CATEGORICAL_FEATURES = {"country": 40, "device": 6, "surface": 12}


class Bucketizer(nn.Module):
    """Maps raw continuous features (B, F) to bucket ids (B, F) with per-feature widths."""

    def __init__(self, specs):
        super().__init__()
        self.register_buffer("widths", torch.tensor([s.width for s in specs], dtype=torch.float32))
        self.register_buffer("max_ids", torch.tensor([s.num_buckets - 1 for s in specs]))
        offsets = torch.tensor([0] + [s.num_buckets for s in specs[:-1]]).cumsum(0)
        self.register_buffer("offsets", offsets)

    def forward(self, x):
        ids = (x // self.widths).long()
        ids = torch.minimum(ids.clamp_min(0), self.max_ids)
        return ids + self.offsets  # index into the shared bucket table


class CTRModel(nn.Module):
    def __init__(self, dim=16, hidden=64):
        super().__init__()
        self.bucketizer = Bucketizer(CONTINUOUS_FEATURES)
        total_buckets = sum(s.num_buckets for s in CONTINUOUS_FEATURES)
        self.bucket_emb = nn.Embedding(total_buckets, dim)
        self.cat_emb = nn.ModuleDict({k: nn.Embedding(n, dim) for k, n in CATEGORICAL_FEATURES.items()})
        n_fields = len(CONTINUOUS_FEATURES) + len(CATEGORICAL_FEATURES)
        self.mlp = nn.Sequential(
            nn.Linear(n_fields * dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )

    def forward(self, dense, cats):
        b = self.bucketizer(dense)
        fields = [self.bucket_emb(b).flatten(1)]
        fields += [self.cat_emb[k](cats[:, i]) for i, k in enumerate(CATEGORICAL_FEATURES)]
        return self.mlp(torch.cat(fields, dim=1)).squeeze(-1)


def make_golden_batch(n=512, seed=1234):
    """Synthetic stand-in for the frozen golden batch exported from the feature store."""
    g = torch.Generator().manual_seed(seed)
    cols = []
    for spec in CONTINUOUS_FEATURES:
        raw = torch.rand(n, generator=g) * spec.width * (spec.num_buckets - 1)
        # the feature store logs values at 0.1 resolution
        cols.append(torch.round(raw * 10) / 10)
    dense = torch.stack(cols, dim=1)
    cats = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CATEGORICAL_FEATURES.values()], dim=1)
    return dense, cats
