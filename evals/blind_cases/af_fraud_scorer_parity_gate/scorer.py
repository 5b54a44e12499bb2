"""Transaction fraud scorer: numeric + categorical features -> fraud logit."""
import torch
from torch import nn

NUM_FEATURES = 24
CAT_CARDINALITIES = (12, 31, 7, 50)   # merchant_cat, region, channel, device_bucket


class FeatureStandardizer(nn.Module):
    """z-scores numeric features with statistics of the training snapshot.

    The statistics are owned by the feature store (they are versioned with the
    snapshot, not with the weights), so they are kept out of the state_dict.
    """

    def __init__(self, n: int):
        super().__init__()
        self.register_buffer("mean", torch.zeros(n), persistent=False)
        self.register_buffer("scale", torch.ones(n), persistent=False)

    @torch.no_grad()
    def fit(self, x: torch.Tensor):
        self.mean.copy_(x.mean(0))
        self.scale.copy_(x.std(0).clamp_min(1e-3))

    @torch.no_grad()
    def load_stats(self, stats: dict):
        self.mean.copy_(torch.as_tensor(stats["mean"]))
        self.scale.copy_(torch.as_tensor(stats["scale"]))

    def stats(self) -> dict:
        return {"mean": self.mean.tolist(), "scale": self.scale.tolist()}

    def forward(self, x):
        return (x - self.mean) / self.scale


class FraudScorer(nn.Module):
    def __init__(self, hidden: int = 128, emb_dim: int = 8, dropout: float = 0.1):
        super().__init__()
        self.norm = FeatureStandardizer(NUM_FEATURES)
        self.embs = nn.ModuleList(nn.Embedding(c, emb_dim) for c in CAT_CARDINALITIES)
        d_in = NUM_FEATURES + emb_dim * len(CAT_CARDINALITIES)
        self.mlp = nn.Sequential(
            nn.Linear(d_in, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, 1),
        )

    def forward(self, num, cat):
        feats = [self.norm(num)] + [emb(cat[:, i]) for i, emb in enumerate(self.embs)]
        return self.mlp(torch.cat(feats, dim=-1)).squeeze(-1)


def synthetic_transactions(n: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    amount = torch.exp(torch.randn(n, 1, generator=g) * 1.2 + 3.5)       # heavy tailed, ~30-300
    age_days = torch.rand(n, 1, generator=g) * 3000.0
    hour = torch.randint(0, 24, (n, 1), generator=g).float()
    rest = torch.randn(n, NUM_FEATURES - 3, generator=g) * 5.0 + 20.0
    num = torch.cat([amount, age_days, hour, rest], dim=1)
    cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CAT_CARDINALITIES], 1)
    risk = 0.004 * amount.squeeze(1) - 0.0008 * age_days.squeeze(1) + (cat[:, 2] == 3).float()
    label = (risk + 0.5 * torch.randn(n, generator=g) > 0.3).float()
    return num, cat, label
