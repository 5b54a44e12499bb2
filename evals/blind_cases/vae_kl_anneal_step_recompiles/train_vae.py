import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_data(n, dim, seed=0):
    g = torch.Generator().manual_seed(seed)
    basis = torch.randn(4, dim, generator=g)
    z = torch.randn(n, 4, generator=g)
    return torch.tanh(z @ basis) + 0.05 * torch.randn(n, dim, generator=g)


class VAE(nn.Module):
    def __init__(self, dim=64, hidden=256, latent=8, kl_warmup=200):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, 2 * latent))
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.SiLU(), nn.Linear(hidden, dim))
        self.kl_warmup = kl_warmup
        self.step = 0

    def set_step(self, step):
        self.step = step

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        recon = self.dec(z)
        rec = F.mse_loss(recon, x, reduction="none").sum(-1).mean()
        kl = (-0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)).mean()
        beta = min(1.0, self.step / self.kl_warmup)
        return rec + beta * kl, rec, kl


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    data = make_data(8192, 64)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    fwd = model if args.no_compile else torch.compile(model)

    step = 0
    steps_per_epoch = len(data) // args.batch_size
    for epoch in range(args.epochs):
        perm = torch.randperm(len(data))
        t0 = time.perf_counter()
        tot = rec_tot = kl_tot = 0.0
        for i in range(steps_per_epoch):
            x = data[perm[i * args.batch_size : (i + 1) * args.batch_size]]
            model.set_step(step)
            loss, rec, kl = fwd(x)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            tot += loss.item(); rec_tot += rec.item(); kl_tot += kl.item()
        dt = time.perf_counter() - t0
        n = steps_per_epoch
        print(f"epoch {epoch} loss {tot / n:.3f} rec {rec_tot / n:.3f} kl {kl_tot / n:.3f} "
              f"{n / dt:.1f} it/s")


if __name__ == "__main__":
    main()
