"""Mean-variance network for solubility regression with calibrated uncertainty.

The model predicts (mu, var) per molecule from a fingerprint-like feature vector and is trained
with the Gaussian negative log-likelihood. The whole train step is compiled with
fullgraph=True so that any graph break fails CI instead of silently slowing training down.

Usage: python train_uncertainty.py [--no-compile] [--epochs N]
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanVarianceNet(nn.Module):
    def __init__(self, in_dim=256, hidden=128, depth=2, dropout=0.2):
        super().__init__()
        layers, d = [], in_dim
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.SiLU(), nn.Dropout(dropout)]
            d = hidden
        self.trunk = nn.Sequential(*layers)
        self.mu = nn.Linear(hidden, 1)
        self.log_var = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.trunk(x)
        mu = self.mu(h).squeeze(-1)
        var = F.softplus(self.log_var(h)).squeeze(-1) + 1e-6
        return mu, var


def train_step(model, x, y, beta: float = 0.5):
    mu, var = model(x)
    nll = F.gaussian_nll_loss(mu, y, var, eps=1e-6, reduction="none")
    # beta-NLL (Seitzer et al. 2022): weight each term by var^beta to stop the
    # variance head from "giving up" on hard examples
    loss = (nll * var.detach() ** beta).mean()
    return loss, nll.mean(), (mu - y).abs().mean()


def make_data(n, in_dim, gen):
    x = (torch.rand(n, in_dim, generator=gen) < 0.1).float()
    w = torch.randn(in_dim, generator=gen) / math.sqrt(in_dim * 0.1)
    clean = x @ w
    noise_scale = 0.1 + 0.9 * x[:, :8].mean(1)  # heteroscedastic noise
    y = clean + noise_scale * torch.randn(n, generator=gen)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    x, y = make_data(16384 + 2048, 256, gen)
    x_tr, y_tr, x_va, y_va = x[:16384], y[:16384], x[16384:], y[16384:]

    model = MeanVarianceNet()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-2)
    step_fn = train_step if args.no_compile else torch.compile(train_step, fullgraph=True)

    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(x_tr), generator=gen)
        for i in range(0, len(perm), 256):
            idx = perm[i:i + 256]
            loss, nll, mae = step_fn(model, x_tr[idx], y_tr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            mu, var = model(x_va)
            va_nll = F.gaussian_nll_loss(mu, y_va, var).item()
            z = ((y_va - mu) / var.sqrt()).abs()
            cover = (z < 1.96).float().mean().item()
        print(f"epoch {epoch} train_nll {nll.item():.4f} train_mae {mae.item():.4f} "
              f"val_nll {va_nll:.4f} val_95%_coverage {cover:.3f} ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
