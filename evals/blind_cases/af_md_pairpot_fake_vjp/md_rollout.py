"""NVE/NVT rollout driver for the learned pair potential.

usage: python md_rollout.py [--compile] [--systems 8] [--atoms 27] [--steps 200]
"""
import argparse
import logging
import time

import torch

from pairpot_ops import energy_forces

log = logging.getLogger("md")


class PairPotential(torch.nn.Module):
    def __init__(self, n_rbf: int = 16, hidden: int = 32):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(n_rbf, hidden) * 0.3)
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.w2 = torch.nn.Parameter(torch.randn(hidden, 1) * 0.05)

    def forward(self, pos):
        return energy_forces(pos, self.w1, self.b1, self.w2)


def make_lattice(n_systems: int, n_atoms: int, spacing: float, jitter: float, gen):
    side = round(n_atoms ** (1 / 3))
    assert side ** 3 == n_atoms, "atoms must be a cube number"
    g = torch.arange(side, dtype=torch.float32) * spacing
    grid = torch.stack(torch.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    pos = grid.expand(n_systems, -1, -1).clone()
    pos += jitter * torch.randn(pos.shape, generator=gen)
    return pos


def kinetic(vel, mass):
    return 0.5 * mass * vel.square().sum(dim=(1, 2))


def verlet_step(potential, pos, vel, forces, mass: float, dt: float,
                t_target: float, tau: float):
    vel_half = vel + 0.5 * dt * forces / mass
    pos_new = pos + dt * vel_half
    energy, forces_new = potential(pos_new)
    vel_new = vel_half + 0.5 * dt * forces_new / mass
    # Berendsen thermostat
    n_dof = 3 * pos.shape[1]
    temp = 2.0 * kinetic(vel_new, mass) / n_dof
    lam = torch.sqrt(1.0 + (dt / tau) * (t_target / temp.clamp_min(1e-6) - 1.0))
    vel_new = vel_new * lam.clamp(0.8, 1.25)[:, None, None]
    return pos_new, vel_new, forces_new, energy, temp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--atoms", type=int, default=27)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--dt", type=float, default=0.005)
    ap.add_argument("--temp", type=float, default=0.5)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    potential = PairPotential().eval()
    for p in potential.parameters():
        p.requires_grad_(False)

    mass = 1.0
    pos = make_lattice(args.systems, args.atoms, spacing=1.1, jitter=0.05, gen=gen)
    vel = torch.randn(pos.shape, generator=gen) * (args.temp / mass) ** 0.5
    vel -= vel.mean(dim=1, keepdim=True)  # zero total momentum

    step_fn = verlet_step
    if args.compile:
        step_fn = torch.compile(verlet_step)
        log.info("compiling verlet_step with inductor")

    with torch.no_grad():
        e0, forces = potential(pos)
        etot0 = (e0 + kinetic(vel, mass)).mean().item()
        log.info("systems=%d atoms=%d  E_tot(0)=%.5f", args.systems, args.atoms, etot0)
        t0 = time.perf_counter()
        for step in range(1, args.steps + 1):
            pos, vel, forces, energy, temp = step_fn(
                potential, pos, vel, forces, mass, args.dt, args.temp, 0.1)
            if step == 1:
                log.info("first step took %.2fs", time.perf_counter() - t0)
                t1 = time.perf_counter()
            if step % args.log_every == 0:
                etot = (energy + kinetic(vel, mass)).mean().item()
                log.info("step %4d  E_pot=%.5f  T=%.4f  E_tot=%.5f",
                         step, energy.mean().item(), temp.mean().item(), etot)
        per_step = (time.perf_counter() - t1) / max(args.steps - 1, 1)
    log.info("done: %.2f ms/step (steady state)", per_step * 1e3)
    print(f"final E_pot={energy.mean().item():.5f} T={temp.mean().item():.4f}")


if __name__ == "__main__":
    main()
