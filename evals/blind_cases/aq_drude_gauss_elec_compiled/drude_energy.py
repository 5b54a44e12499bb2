"""Batched electrostatics for a Drude-polarizable water model with Gaussian (smeared) charges.

Each water has an oxygen core, a Drude shell attached to it by a harmonic spring, and two hydrogens.
Every site carries a Gaussian charge of width sigma; the pair energy between two Gaussian charges is
    E_ij = k_e * q_i * q_j * erf(r_ij / (sqrt(2) * gamma_ij)) / r_ij,   gamma_ij = sqrt(sigma_i^2 + sigma_j^2)
which stays finite as r -> 0, so core-shell pairs are included without exclusions.

Usage:
    python drude_energy.py --clusters 256 --waters 8 --steps 5
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn

log = logging.getLogger("drude")

KE = 332.0637  # kcal/mol * A / e^2
SITES_PER_WATER = 4  # O core, D shell, H1, H2


class GaussianChargeElectrostatics(nn.Module):
    def __init__(self, q_core=1.71636, q_shell=-1.71636 - 0.0, q_h=0.55733, k_drude=1000.0,
                 sigma_o=0.70, sigma_d=0.70, sigma_h=0.45):
        super().__init__()
        # partial charges: O core carries -2*q_h + |q_shell| so the molecule is neutral
        q_o = -2.0 * q_h - q_shell
        self.register_buffer("q_site", torch.tensor([q_o, q_shell, q_h, q_h]))
        self.register_buffer("sigma_site", torch.tensor([sigma_o, sigma_d, sigma_h, sigma_h]))
        self.k_drude = k_drude

    def forward(self, pos):
        # pos: (B, N, 3) with N = n_waters * 4, ordered [O, D, H, H] per water
        B, N, _ = pos.shape
        n_w = N // SITES_PER_WATER
        q = self.q_site.repeat(n_w)
        sig = self.sigma_site.repeat(n_w)
        diff = pos[:, :, None, :] - pos[:, None, :, :]
        r2 = (diff * diff).sum(-1)
        iu = torch.triu_indices(N, N, offset=1, device=pos.device)
        r = r2[:, iu[0], iu[1]].clamp_min(1e-12).sqrt()
        gamma = torch.sqrt(sig[iu[0]] ** 2 + sig[iu[1]] ** 2)
        qq = q[iu[0]] * q[iu[1]]
        # intramolecular O-H / H-H pairs are excluded (rigid geometry), core-shell is kept
        mol = torch.arange(N, device=pos.device) // SITES_PER_WATER
        kind = torch.arange(N, device=pos.device) % SITES_PER_WATER
        same = mol[iu[0]] == mol[iu[1]]
        core_shell = same & (kind[iu[0]] == 0) & (kind[iu[1]] == 1)
        keep = (~same) | core_shell
        e_pair = KE * qq * torch.erf(r / (math.sqrt(2.0) * gamma)) / r
        e_elec = (e_pair * keep).sum(-1)
        d = pos[:, 1::SITES_PER_WATER] - pos[:, 0::SITES_PER_WATER]
        e_spring = 0.5 * self.k_drude * (d * d).sum(-1).sum(-1)
        return e_elec + e_spring


def make_clusters(n_clusters, n_waters, drude_scale, seed):
    g = torch.Generator().manual_seed(seed)
    oh, ang = 0.9572, math.radians(104.52)
    pos = []
    for _ in range(n_clusters):
        centers = torch.rand(n_waters, 3, generator=g) * 6.0
        sites = []
        for w in range(n_waters):
            rot, _ = torch.linalg.qr(torch.randn(3, 3, generator=g))
            h1 = torch.tensor([oh, 0.0, 0.0]) @ rot.T
            h2 = torch.tensor([oh * math.cos(ang), oh * math.sin(ang), 0.0]) @ rot.T
            shell = torch.randn(3, generator=g) * drude_scale
            o = centers[w]
            sites += [o, o + shell, o + h1, o + h2]
        pos.append(torch.stack(sites))
    return torch.stack(pos)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=256)
    ap.add_argument("--waters", type=int, default=8)
    ap.add_argument("--drude-scale", type=float, default=2e-4, help="std of initial shell displacement (A)")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rtol", type=float, default=1e-5)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    pos = make_clusters(args.clusters, args.waters, args.drude_scale, args.seed)
    model = GaussianChargeElectrostatics().eval()
    compiled = torch.compile(model)

    with torch.no_grad():
        t0 = time.perf_counter()
        e_eager = model(pos)
        t1 = time.perf_counter()
        e_comp = compiled(pos)
        t2 = time.perf_counter()
        log.info("eager %.3fs, first compiled call %.3fs", t1 - t0, t2 - t1)
        for _ in range(args.steps):
            t3 = time.perf_counter(); compiled(pos); t4 = time.perf_counter()
        log.info("compiled steady-state %.4fs/call", t4 - t3)

    diff = (e_comp - e_eager).abs()
    rel = diff / e_eager.abs()
    log.info("mean energy per cluster: eager %.6f  compiled %.6f kcal/mol", e_eager.mean(), e_comp.mean())
    log.info("max |E_comp - E_eager| = %.4e kcal/mol, max rel = %.3e", diff.max(), rel.max())
    worst = int(rel.argmax())
    log.info("worst cluster %d: eager %.6f compiled %.6f", worst, e_eager[worst], e_comp[worst])
    if not torch.allclose(e_comp, e_eager, rtol=args.rtol, atol=0.0):
        log.error("PARITY CHECK FAILED (rtol=%g): compiled energies do not match eager", args.rtol)
        raise SystemExit(1)
    log.info("parity check passed")


if __name__ == "__main__":
    main()
