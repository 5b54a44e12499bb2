"""Molecular fingerprint VAE (2048-bit Morgan-style fingerprints -> 32-d latent).

Trains a small beta-VAE on fingerprint bit vectors and reports reconstruction /
KL per epoch. Synthetic fingerprints are generated from a few "scaffold"
prototypes so the script runs without RDKit or a dataset download.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("fpvae")


def make_fingerprints(n, n_bits=2048, n_scaffolds=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    protos = (torch.rand(n_scaffolds, n_bits, generator=g) < 0.04).float()
    idx = torch.randint(0, n_scaffolds, (n,), generator=g)
    fp = protos[idx]
    flip = torch.rand(n, n_bits, generator=g) < 0.01
    fp = torch.where(flip, 1.0 - fp, fp)
    return fp, idx


class FingerprintVAE(nn.Module):
    def __init__(self, n_bits=2048, hidden=512, latent=32, beta=0.5):
        super().__init__()
        self.beta = beta
        self.encoder = nn.Sequential(
            nn.Linear(n_bits, hidden), nn.LayerNorm(hidden), nn.GELU(),
            nn.Linear(hidden, hidden // 2), nn.GELU(),
        )
        self.to_mu = nn.Linear(hidden // 2, latent)
        self.to_logvar = nn.Linear(hidden // 2, latent)
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden // 2), nn.GELU(),
            nn.Linear(hidden // 2, hidden), nn.LayerNorm(hidden), nn.GELU(),
            nn.Linear(hidden, n_bits),
        )

    def posterior(self, x):
        h = self.encoder(x)
        mu = self.to_mu(h)
        logvar = self.to_logvar(h).clamp(-8.0, 8.0)
        return Normal(mu, torch.exp(0.5 * logvar))

    def forward(self, x):
        q = self.posterior(x)
        z = q.rsample()
        logits = self.decoder(z)
        recon = F.binary_cross_entropy_with_logits(logits, x, reduction="none").sum(-1)
        prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
        kl = kl_divergence(q, prior).sum(-1)
        loss = (recon + self.beta * kl).mean()
        return loss, recon.mean().detach(), kl.mean().detach()


def sanity_check(model, loader):
    """One eager forward on a real batch: catches shape / dtype mistakes early."""
    x, _ = next(iter(loader))
    with torch.no_grad():
        loss, recon, kl = model(x)
    assert torch.isfinite(loss), "non-finite loss in sanity check"
    log.info("sanity check ok: loss=%.2f recon=%.2f kl=%.2f", loss.item(), recon.item(), kl.item())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true")
    p.add_argument("--sanity-check", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    fp, _ = make_fingerprints(args.n, seed=args.seed)
    loader = DataLoader(TensorDataset(fp, torch.zeros(args.n)), batch_size=args.batch_size,
                        shuffle=True, drop_last=True)

    model = FingerprintVAE(beta=args.beta)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)

    if args.sanity_check:
        sanity_check(model, loader)

    step_fn = model
    if args.compile:
        step_fn = torch.compile(model, fullgraph=args.fullgraph)
        log.info("compiled model (fullgraph=%s)", args.fullgraph)

    for epoch in range(args.epochs):
        model.train()
        t0 = time.perf_counter()
        tot = rec = klt = 0.0
        nb = 0
        for x, _ in loader:
            loss, recon, kl = step_fn(x)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            tot += loss.item(); rec += recon.item(); klt += kl.item(); nb += 1
        dt = time.perf_counter() - t0
        log.info("epoch %d loss=%.2f recon=%.2f kl=%.2f (%.1fs, %d steps)",
                 epoch, tot / nb, rec / nb, klt / nb, dt, nb)


if __name__ == "__main__":
    main()
