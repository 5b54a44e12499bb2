"""Nightly anomaly-scoring job for the pump-vibration fleet.

Trains a small 1-D convolutional VAE on healthy windows, fits latent
statistics on the training split, then scores a held-out split that
contains injected faults.  Two scores are combined:
  * reconstruction error + KL (from the decoder)
  * Mahalanobis distance of the posterior mean to the healthy latent cloud
The scoring path is compiled because the fleet-wide job scores ~40M windows.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--no-compile", action="store_true")
p.add_argument("--epochs", type=int, default=3)
p.add_argument("--seed", type=int, default=0)
args = p.parse_args()

torch.manual_seed(args.seed)
CHANNELS, WIN, LATENT = 6, 128, 16
BATCH = 64


# ---------------------------------------------------------------- data
def make_windows(n, fault_frac=0.0, gen=None):
    t = torch.arange(WIN, dtype=torch.float32) / 256.0
    base_f = 18.0 + 4.0 * torch.rand(n, 1, 1, generator=gen)
    phase = 2 * math.pi * torch.rand(n, CHANNELS, 1, generator=gen)
    amp = 0.8 + 0.4 * torch.rand(n, CHANNELS, 1, generator=gen)
    x = amp * torch.sin(2 * math.pi * base_f * t + phase)
    x = x + 0.35 * amp * torch.sin(4 * math.pi * base_f * t + 0.5 * phase)
    x = x + 0.05 * torch.randn(n, CHANNELS, WIN, generator=gen)
    labels = torch.zeros(n, dtype=torch.long)
    n_fault = int(n * fault_frac)
    if n_fault:
        idx = torch.randperm(n, generator=gen)[:n_fault]
        # bearing fault: periodic impulses + broadband noise on a subset of axes
        imp = (torch.arange(WIN) % 23 == 0).float() * 2.5
        x[idx, :3] += imp + 0.3 * torch.randn(n_fault, 3, WIN, generator=gen)
        labels[idx] = 1
    return x, labels


# ---------------------------------------------------------------- model
class ConvVAE(nn.Module):
    def __init__(self, c=CHANNELS, latent=LATENT, width=48):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv1d(c, width, 7, stride=2, padding=3), nn.GELU(),
            nn.Conv1d(width, width, 5, stride=2, padding=2), nn.GELU(),
            nn.Conv1d(width, 2 * width, 5, stride=2, padding=2), nn.GELU(),
            nn.AdaptiveAvgPool1d(1),
        )
        self.to_mu = nn.Conv1d(2 * width, latent, 1)
        self.to_logvar = nn.Conv1d(2 * width, latent, 1)
        self.dec = nn.Sequential(
            nn.ConvTranspose1d(latent, 2 * width, WIN // 8), nn.GELU(),
            nn.ConvTranspose1d(2 * width, width, 4, stride=2, padding=1), nn.GELU(),
            nn.ConvTranspose1d(width, width, 4, stride=2, padding=1), nn.GELU(),
            nn.ConvTranspose1d(width, c, 4, stride=2, padding=1),
        )

    def encode(self, x):
        h = self.enc(x)
        mu, logvar = self.to_mu(h), self.to_logvar(h).clamp(-8.0, 8.0)
        if self.training:
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        else:
            z = mu
        # detached posterior mean for the latent-statistics bank
        return z, mu.detach(), logvar

    def decode(self, z):
        return self.dec(z)

    def forward(self, x):
        z, mu, logvar = self.encode(x)
        return self.decode(z), mu, logvar


def vae_terms(x, recon, mu, logvar):
    rec = F.mse_loss(recon, x, reduction="none").mean(dim=(1, 2))
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=(1, 2)) / WIN
    return rec, kl


def auroc(scores, labels):
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    pos = labels == 1
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


# ---------------------------------------------------------------- train (eager)
gen = torch.Generator().manual_seed(1234)
x_train, _ = make_windows(4096, 0.0, gen)
x_test, y_test = make_windows(1536, 0.08, gen)

model = ConvVAE()
opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
t0 = time.time()
for epoch in range(args.epochs):
    model.train()
    perm = torch.randperm(len(x_train))
    tot = 0.0
    for i in range(0, len(x_train), BATCH):
        xb = x_train[perm[i:i + BATCH]]
        z, mu_d, logvar = model.encode(xb)
        recon = model.decode(z)
        rec, kl = vae_terms(xb, recon, mu_d, logvar)
        loss = (rec + 0.05 * kl).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        tot += loss.item() * len(xb)
    print(f"epoch {epoch}  train loss {tot / len(x_train):.4f}")
print(f"train time {time.time() - t0:.1f}s")

# ---------------------------------------------------------------- scoring
model.eval()
if args.no_compile:
    encode, decode = model.encode, model.decode
else:
    encode = torch.compile(model.encode)
    decode = torch.compile(model.decode)


@torch.no_grad()
def fit_latent_stats(x):
    bank = []
    for i in range(0, len(x), 256):
        _, mu_d, _ = encode(x[i:i + 256])
        bank.append(mu_d.squeeze_(-1))
    bank = torch.cat(bank).double()
    mean = bank.mean(0)
    cov = torch.cov(bank.T) + 1e-4 * torch.eye(LATENT, dtype=torch.float64)
    return mean, torch.linalg.inv(cov)


@torch.no_grad()
def score(x, mean, prec):
    rec_all, kl_all, maha_all = [], [], []
    for i in range(0, len(x), 256):
        xb = x[i:i + 256]
        z, mu_d, logvar = encode(xb)
        latent = mu_d.squeeze_(-1).double()
        d = latent - mean
        maha_all.append(torch.einsum("bi,ij,bj->b", d, prec, d).float())
        recon = decode(z)
        rec, kl = vae_terms(xb, recon, z, logvar)
        rec_all.append(rec)
        kl_all.append(kl)
    return torch.cat(rec_all), torch.cat(kl_all), torch.cat(maha_all)


t0 = time.time()
mean, prec = fit_latent_stats(x_train)
rec, kl, maha = score(x_test, mean, prec)
combined = (rec - rec.mean()) / rec.std() + (maha - maha.mean()) / maha.std()
print(f"scoring time {time.time() - t0:.1f}s  ({'eager' if args.no_compile else 'compiled'})")
print(f"AUROC recon={auroc(rec, y_test):.4f}  maha={auroc(maha, y_test):.4f}  combined={auroc(combined, y_test):.4f}")
assert auroc(combined, y_test) > 0.9, "fault detector below release bar"
print("OK")
