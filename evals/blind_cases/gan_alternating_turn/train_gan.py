"""Toy GAN on the classic 8-Gaussian ring, alternating D / G updates.

    python train_gan.py               # torch.compile'd objective
    python train_gan.py --no-compile  # plain eager
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# Sentinels saying whose update comes next.
DISC_TURN = object()
GEN_TURN = object()

MODES = torch.tensor([[math.cos(2 * math.pi * k / 8), math.sin(2 * math.pi * k / 8)] for k in range(8)]) * 2.0


def ring_batch(n, gen):
    idx = torch.randint(0, 8, (n,), generator=gen)
    return MODES[idx] + 0.05 * torch.randn(n, 2, generator=gen)


def mlp(i, h, o):
    return nn.Sequential(nn.Linear(i, h), nn.LeakyReLU(0.2), nn.Linear(h, h), nn.LeakyReLU(0.2), nn.Linear(h, o))


class AlternatingObjective:
    """Returns the loss of whichever network's turn it is, then hands the turn over.

    Keeping the turn inside the objective means the training loop (and the
    checkpoint/resume code) never has to track it separately.
    """

    def __init__(self, G, D, z_dim):
        self.G, self.D, self.z_dim = G, D, z_dim
        self.turn = DISC_TURN

    def __call__(self, real, z):
        fake = self.G(z)
        if self.turn is DISC_TURN:
            d_real = self.D(real)
            d_fake = self.D(fake.detach())
            loss = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
            self.turn = GEN_TURN
        else:
            loss = F.softplus(-self.D(fake)).mean()  # non-saturating G loss
            self.turn = DISC_TURN
        return loss


@torch.no_grad()
def evaluate(G, z_dim, gen):
    s = G(torch.randn(2000, z_dim, generator=gen))
    d = torch.cdist(s, MODES)                       # (2000, 8)
    nearest = d.min(1)
    hq = nearest.values < 0.3                       # "high quality" samples
    covered = torch.unique(nearest.indices[hq]).numel()
    return nearest.values.mean().item(), hq.float().mean().item(), covered


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--iters", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    z_dim = 8
    G, D = mlp(z_dim, 128, 2), mlp(2, 128, 1)
    opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))

    objective = AlternatingObjective(G, D, z_dim)
    loss_fn = objective if args.no_compile else torch.compile(objective)

    g_steps = d_steps = 0
    last = {"d": float("nan"), "g": float("nan")}
    t0 = time.time()
    for it in range(1, args.iters + 1):
        real = ring_batch(args.batch, gen)
        z = torch.randn(args.batch, z_dim, generator=gen)
        disc_turn = objective.turn is DISC_TURN
        opt = opt_d if disc_turn else opt_g
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(real, z)
        loss.backward()
        opt.step()
        if disc_turn:
            d_steps += 1
            last["d"] = loss.item()
        else:
            g_steps += 1
            last["g"] = loss.item()
        if it % 500 == 0:
            dist, hq, cov = evaluate(G, z_dim, gen)
            print(f"it {it:5d}  d_loss {last['d']:.3f}  g_loss {last['g']:.3f}  "
                  f"d_steps {d_steps} g_steps {g_steps}  mean_dist {dist:.3f}  "
                  f"hq {hq:.2f}  modes {cov}/8  ({time.time() - t0:.1f}s)", flush=True)

    dist, hq, cov = evaluate(G, z_dim, gen)
    print(f"FINAL mean_dist {dist:.3f}  hq {hq:.2f}  modes {cov}/8")
    if cov < 6:
        print("FAIL: generator did not learn the ring")


if __name__ == "__main__":
    main()
