import argparse
import math
import time
import torch
import torch.nn as nn


def eight_gaussians(n, gen):
    scale = 2.0
    centers = torch.tensor([(math.cos(a), math.sin(a)) for a in torch.arange(8) * (math.pi / 4)]) * scale
    idx = torch.randint(0, 8, (n,), generator=gen)
    pts = centers[idx] + 0.02 * torch.randn(n, 2, generator=gen)
    return pts / 1.414


class Generator(nn.Module):
    def __init__(self, z=2, dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(z, dim), nn.ReLU(), nn.Linear(dim, dim), nn.ReLU(),
            nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 2),
        )

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self, dim=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, dim), nn.LeakyReLU(0.2), nn.Linear(dim, dim), nn.LeakyReLU(0.2),
            nn.Linear(dim, dim), nn.LeakyReLU(0.2), nn.Linear(dim, 1),
        )

    def forward(self, x):
        return self.net(x)


def gradient_penalty(critic, real, fake, gen, lam=0.1):
    eps = torch.rand(real.size(0), 1, generator=gen)
    interp = (eps * real + (1 - eps) * fake).requires_grad_(True)
    out = critic(interp)
    grads, = torch.autograd.grad(out.sum(), interp, create_graph=True)
    return lam * ((grads.norm(2, dim=1) - 1) ** 2).mean()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--critic-iters", type=int, default=5)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    G, D = Generator(), Critic()
    optG = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.9))
    optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
    if not args.no_compile:
        G = torch.compile(G)
        D = torch.compile(D)

    t0 = time.time()
    for it in range(args.iters):
        for p in D.parameters():
            p.requires_grad_(True)
        for _ in range(args.critic_iters):
            real = eight_gaussians(args.batch, gen)
            with torch.no_grad():
                fake = G(torch.randn(args.batch, 2, generator=gen))
            d_real = D(real).mean()
            d_fake = D(fake).mean()
            gp = gradient_penalty(D, real, fake, gen)
            d_loss = d_fake - d_real + gp
            optD.zero_grad(set_to_none=True)
            d_loss.backward()
            optD.step()

        for p in D.parameters():
            p.requires_grad_(False)
        fake = G(torch.randn(args.batch, 2, generator=gen))
        g_loss = -D(fake).mean()
        optG.zero_grad(set_to_none=True)
        g_loss.backward()
        optG.step()

        if it % 20 == 0 or it == args.iters - 1:
            w = (d_real - d_fake).item()
            print(f"iter {it:4d}  W_est={w:.4f}  gp={gp.item():.4f}  g_loss={g_loss.item():.4f}  {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
