import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._higher_order_ops.scan import scan


class DiagonalSSM(nn.Module):
    """Real diagonal linear recurrence (LRU-style):
        h_t = a * h_{t-1} + B x_t,   y_t = C h_t + D * x_t
    The time loop is a `scan` so that torch.compile sees one step body instead of
    unrolling T copies of it."""

    def __init__(self, d_model, d_state, r_min=0.6, r_max=0.99):
        super().__init__()
        u = torch.rand(d_state)
        a0 = r_min + (r_max - r_min) * u
        self.a_logit = nn.Parameter(torch.log(a0 / (1 - a0)))
        self.B = nn.Linear(d_model, d_state, bias=False)
        self.C = nn.Linear(d_state, d_model, bias=False)
        self.D = nn.Parameter(torch.ones(d_model))
        nn.init.normal_(self.B.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.C.weight, std=1.0 / math.sqrt(d_state))

    def forward(self, x):  # x: (batch, time, d_model)
        a = torch.sigmoid(self.a_logit)
        gain = torch.sqrt(1 - a * a)  # keeps the state variance ~ input variance
        u = (self.B(x) * gain).transpose(0, 1)  # (time, batch, d_state)

        def step(h, u_t):
            h = a * h + u_t
            return h, h.clone()

        h0 = x.new_zeros(x.shape[0], a.shape[0])
        _, hs = scan(step, h0, u)
        return self.C(hs.transpose(0, 1)) + self.D * x


class SSMBlock(nn.Module):
    def __init__(self, d_model, d_state, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.ssm = DiagonalSSM(d_model, d_state)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.ssm(self.norm1(x)))
        return x + self.drop(self.ff(self.norm2(x)))


class Forecaster(nn.Module):
    """Reads `context` steps of n_sensors channels and predicts the next `horizon` steps."""

    def __init__(self, n_sensors, horizon, d_model=32, d_state=32, n_layers=2, dropout=0.0):
        super().__init__()
        self.horizon = horizon
        self.inp = nn.Linear(n_sensors + 2, d_model)
        self.blocks = nn.ModuleList(SSMBlock(d_model, d_state, dropout) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_sensors * horizon)

    def forward(self, series, time_feats):
        # series: (B, T, S) already scaled; time_feats: (B, T, 2) sin/cos of time of day
        x = self.inp(torch.cat([series, time_feats], dim=-1))
        for blk in self.blocks:
            x = blk(x)
        last = self.norm(x[:, -1])
        return self.head(last).view(series.shape[0], self.horizon, series.shape[-1])


def forecast_loss(pred, target):
    return F.smooth_l1_loss(pred, target, beta=0.5)
