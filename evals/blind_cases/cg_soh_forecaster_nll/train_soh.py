"""Battery state-of-health forecaster with a heteroscedastic (Gaussian NLL) head.

Each sample is a window of per-cycle features (voltage/current/temperature
summaries) from a cell; the target is the capacity fade over the next cycles.
The model predicts a mean and a log-variance so we can report calibrated
intervals to the fleet dashboard.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("soh")


# ----------------------------------------------------------------------------
# synthetic fleet data (stands in for the parquet export)
# ----------------------------------------------------------------------------
def make_fleet(n_cells, window, n_feat, seed):
    g = torch.Generator().manual_seed(seed)
    age = torch.rand(n_cells, 1, 1, generator=g)
    t = torch.linspace(0, 1, window).view(1, window, 1)
    base = torch.randn(1, 1, n_feat, generator=g)
    drift = torch.randn(1, 1, n_feat, generator=g) * 0.5
    x = base + drift * (t + age) + 0.1 * torch.randn(n_cells, window, n_feat, generator=g)
    temp = x[:, :, 2].mean(1)
    fade = 0.8 * age.view(-1) + 0.3 * torch.tanh(temp)
    noise_scale = 0.02 + 0.1 * age.view(-1)
    y = fade + noise_scale * torch.randn(n_cells, generator=g)
    return x, y.unsqueeze(1)


class FeatureNorm(nn.Module):
    def __init__(self, n_feat):
        super().__init__()
        self.register_buffer("mu", torch.zeros(n_feat))
        self.register_buffer("sd", torch.ones(n_feat))

    def fit(self, x):
        self.mu.copy_(x.mean((0, 1)))
        self.sd.copy_(x.std((0, 1)).clamp_min(1e-3))

    def forward(self, x):
        return (x - self.mu) / self.sd


class CycleEncoder(nn.Module):
    def __init__(self, n_feat, d_model, n_layers):
        super().__init__()
        self.inp = nn.Linear(n_feat, d_model)
        self.convs = nn.ModuleList(
            nn.Conv1d(d_model, d_model, kernel_size=5, padding=2, groups=4) for _ in range(n_layers)
        )
        self.norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.mlps = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
            for _ in range(n_layers)
        )

    def forward(self, x):
        h = self.inp(x)
        for conv, norm, mlp in zip(self.convs, self.norms, self.mlps):
            h = h + conv(h.transpose(1, 2)).transpose(1, 2)
            h = h + mlp(norm(h))
        return h


class SoHForecaster(nn.Module):
    def __init__(self, n_feat, d_model=64, n_layers=3):
        super().__init__()
        self.norm = FeatureNorm(n_feat)
        self.encoder = CycleEncoder(n_feat, d_model, n_layers)
        self.pool_q = nn.Parameter(torch.randn(d_model) / math.sqrt(d_model))
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, d_model), nn.SiLU(), nn.Linear(d_model, 2))

    def forward(self, x):
        h = self.encoder(self.norm(x))
        attn = torch.softmax(h @ self.pool_q, dim=1)            # (B, T)
        pooled = (attn.unsqueeze(-1) * h).sum(1)
        out = self.head(pooled)                                 # (B, 2)
        mean, log_var = out[:, :1], out[:, 1:]
        # raw head output is also handed to the dashboard exporter
        return mean, log_var, out.detach()


def gaussian_nll(mean, log_var, y):
    log_var = log_var.clamp(-8.0, 4.0)
    return 0.5 * (log_var + (y - mean) ** 2 * torch.exp(-log_var)).mean()


def interval_coverage(mean, log_var, y, z=1.96):
    sd = torch.exp(0.5 * log_var.clamp(-8.0, 4.0))
    return ((y - mean).abs() <= z * sd).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--cells", type=int, default=1024)
    ap.add_argument("--window", type=int, default=48)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    n_feat = 6
    x, y = make_fleet(args.cells, args.window, n_feat, args.seed)
    n_val = args.cells // 8
    xtr, ytr, xva, yva = x[n_val:], y[n_val:], x[:n_val], y[:n_val]

    model = SoHForecaster(n_feat)
    model.norm.fit(xtr)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step_fn = torch.compile(model) if args.compile else model
    log.info("params=%d compile=%s torch=%s", sum(p.numel() for p in model.parameters()), args.compile,
             torch.__version__)

    dash_rows = []
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        perm = torch.randperm(xtr.shape[0])
        tot, nb, gn = 0.0, 0, 0.0
        for i in range(0, xtr.shape[0], args.batch):
            idx = perm[i:i + args.batch]
            mean, log_var, raw = step_fn(xtr[idx])
            loss = gaussian_nll(mean, log_var, ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            gn += float(torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0))
            opt.step()
            tot += loss.item()
            nb += 1
            dash_rows.append(raw[:4])
        model.eval()
        with torch.no_grad():
            mean, log_var, _ = step_fn(xva)
            vloss = gaussian_nll(mean, log_var, yva).item()
            mae = (mean - yva).abs().mean().item()
            cov = interval_coverage(mean, log_var, yva)
        log.info("epoch %d train_nll=%.4f grad_norm=%.4f val_nll=%.4f val_mae=%.4f cov95=%.3f (%.1fs)",
                 epoch, tot / nb, gn / nb, vloss, mae, cov, time.time() - t0)
    log.info("dashboard rows exported: %d", sum(r.shape[0] for r in dash_rows))


if __name__ == "__main__":
    main()
