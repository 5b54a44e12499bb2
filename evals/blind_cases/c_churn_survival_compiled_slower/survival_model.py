"""Discrete-time (logistic hazard) survival model for subscription churn.

Each customer gets a daily hazard h[t] = P(churn on day t | active at start of day t)
over a two-year horizon. Covariates: numeric usage/billing features plus a few
categoricals (plan, region, acquisition channel).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CategoricalEncoder(nn.Module):
    def __init__(self, cardinalities, dim):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(n, dim) for n in cardinalities)

    def forward(self, cats):
        return torch.cat([tab(cats[:, i]) for i, tab in enumerate(self.tables)], dim=-1)


class HazardHead(nn.Module):
    """Per-customer hazard curve = smooth time basis weighted by a customer code."""

    def __init__(self, code_dim, horizon, n_knots=32):
        super().__init__()
        self.horizon = horizon
        t = torch.linspace(0, 1, horizon)
        centers = torch.linspace(0, 1, n_knots)
        width = 1.5 / n_knots
        basis = torch.exp(-0.5 * ((t[None, :] - centers[:, None]) / width) ** 2)
        self.register_buffer("basis", basis / basis.sum(0, keepdim=True))  # (K, T)
        self.proj = nn.Linear(code_dim, n_knots)
        self.baseline = nn.Parameter(torch.full((n_knots,), -6.0))
        self.day_offset = nn.Parameter(torch.zeros(horizon))  # weekly seasonality etc.

    def forward(self, code):
        w = self.proj(code) + self.baseline           # (B, K)
        return w @ self.basis + self.day_offset      # (B, T) hazard logits


class ChurnSurvivalNet(nn.Module):
    def __init__(self, n_numeric, cardinalities, horizon, emb_dim=8, hidden=128, code_dim=32,
                 dropout=0.1):
        super().__init__()
        self.cats = CategoricalEncoder(cardinalities, emb_dim)
        in_dim = n_numeric + emb_dim * len(cardinalities)
        self.num_norm = nn.LayerNorm(n_numeric)
        self.trunk = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, code_dim),
        )
        self.head = HazardHead(code_dim, horizon)

    def hazards(self, num, cats):
        x = torch.cat([self.num_norm(num), self.cats(cats)], dim=-1)
        return torch.sigmoid(self.head(self.trunk(x)))    # (B, T) in (0, 1)

    def survival(self, num, cats):
        h = self.hazards(num, cats)
        return h, torch.cumprod(1.0 - h, dim=-1)          # S[t] = P(active after day t)

    def forward(self, num, cats, duration, event):
        """Negative log-likelihood with right censoring.

        duration: day index of churn (event=1) or of last observation (event=0).
        """
        h, surv = self.survival(num, cats)
        surv_before = F.pad(surv[:, :-1], (1, 0), value=1.0)
        idx = duration.unsqueeze(1)
        h_t = h.gather(1, idx).squeeze(1)
        s_prev = surv_before.gather(1, idx).squeeze(1)
        s_t = surv.gather(1, idx).squeeze(1)
        eps = 1e-7
        ll_event = torch.log(h_t.clamp_min(eps)) + torch.log(s_prev.clamp_min(eps))
        ll_cens = torch.log(s_t.clamp_min(eps))
        ll = torch.where(event.bool(), ll_event, ll_cens)
        return -ll.mean()
