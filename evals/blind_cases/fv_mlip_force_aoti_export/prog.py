"""Package the Ar-cluster neural pair potential for the MD engine.

Steps:
  1. fit a small radial-basis pair potential to Lennard-Jones reference
     energies/forces (a few hundred Adam steps, eager)
  2. torch.export the energy+force model, AOTInductor-package it
  3. reload the .pt2 and check it against the eager model on held-out frames
"""
import math
import os
import time

import torch
import torch.nn as nn
from torch._inductor import aoti_compile_and_package, aoti_load_package

torch.manual_seed(0)

N_ATOMS = 16
CUTOFF = 3.0
N_RBF = 24
PKG_PATH = os.environ.get("PKG_PATH", "/tmp/ar16_potential.pt2")


# --------------------------------------------------------------------------
# reference data: Lennard-Jones clusters (reduced units, sigma=1, eps=1)
# --------------------------------------------------------------------------
def lj_energy(pos):
    i, j = torch.triu_indices(pos.shape[-2], pos.shape[-2], 1)
    r = (pos[..., i, :] - pos[..., j, :]).norm(dim=-1)
    sr6 = (1.0 / r) ** 6
    return (4.0 * (sr6 * sr6 - sr6)).sum(-1)


def make_frames(n_frames, gen):
    # jittered fcc-ish lattice so no two atoms start too close
    base = torch.stack(torch.meshgrid(
        torch.arange(2.), torch.arange(2.), torch.arange(4.), indexing="ij"), -1).reshape(-1, 3)
    base = base * 1.12
    pos = base.unsqueeze(0) + 0.04 * torch.randn(n_frames, N_ATOMS, 3, generator=gen)
    pos = pos.double().requires_grad_(True)
    e = lj_energy(pos)
    f = -torch.autograd.grad(e.sum(), pos)[0]
    return pos.detach().float(), e.detach().float(), f.detach().float()


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------
class GaussianRBF(nn.Module):
    def __init__(self, n, cutoff):
        super().__init__()
        self.register_buffer("mu", torch.linspace(0.5, cutoff, n))
        self.gamma = 0.5 / (cutoff / n) ** 2

    def forward(self, d):
        return torch.exp(-self.gamma * (d.unsqueeze(-1) - self.mu) ** 2)


class CosineCutoff(nn.Module):
    def __init__(self, cutoff):
        super().__init__()
        self.cutoff = cutoff

    def forward(self, d):
        c = 0.5 * (torch.cos(d * math.pi / self.cutoff) + 1.0)
        return c * (d < self.cutoff).to(d.dtype)


class PairPotential(nn.Module):
    """E = sum_{i<j} fcut(r_ij) * MLP(rbf(r_ij)),  F = -dE/dx."""

    def __init__(self, n_atoms, n_rbf=N_RBF, hidden=64, cutoff=CUTOFF):
        super().__init__()
        i, j = torch.triu_indices(n_atoms, n_atoms, 1)
        self.register_buffer("pair_i", i, persistent=False)
        self.register_buffer("pair_j", j, persistent=False)
        self.rbf = GaussianRBF(n_rbf, cutoff)
        self.fcut = CosineCutoff(cutoff)
        self.mlp = nn.Sequential(
            nn.Linear(n_rbf, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )
        self.register_buffer("e_shift", torch.zeros(()))
        self.register_buffer("e_scale", torch.ones(()))

    def energy(self, pos):
        rij = pos[:, self.pair_i, :] - pos[:, self.pair_j, :]
        d = torch.linalg.vector_norm(rij, dim=-1)
        pair_e = self.mlp(self.rbf(d)).squeeze(-1) * self.fcut(d)
        return pair_e.sum(-1) * self.e_scale + self.e_shift

    def forward(self, pos):
        pos = pos.detach().requires_grad_(True)
        e = self.energy(pos)
        f = -torch.autograd.grad(e.sum(), pos, create_graph=self.training)[0]
        return e, f


# --------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------
def fit(model, pos, e_ref, f_ref, steps=200, lr=3e-3, w_f=10.0):
    model.e_shift.fill_(e_ref.mean().item())
    model.e_scale.fill_(1.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, pos.shape[0], (32,))
        e, f = model(pos[idx])
        loss = ((e - e_ref[idx]) ** 2).mean() + w_f * ((f - f_ref[idx]) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    model.eval()
    return model


def evaluate(fn, pos, e_ref, f_ref, bs=16):
    e_err, f_err = [], []
    for k in range(0, pos.shape[0], bs):
        e, f = fn(pos[k:k + bs])
        e_err.append((e.detach() - e_ref[k:k + bs]).abs())
        f_err.append((f.detach() - f_ref[k:k + bs]).abs().flatten())
    return torch.cat(e_err).mean().item(), torch.cat(f_err).mean().item()


def main():
    t0 = time.time()
    gen = torch.Generator().manual_seed(1234)
    pos_tr, e_tr, f_tr = make_frames(512, gen)
    pos_va, e_va, f_va = make_frames(64, gen)
    print(f"frames: train {pos_tr.shape[0]}  val {pos_va.shape[0]}  atoms {N_ATOMS}")

    model = fit(PairPotential(N_ATOMS), pos_tr, e_tr, f_tr)
    e_mae, f_mae = evaluate(model, pos_va, e_va, f_va)
    print(f"eager   val MAE  E {e_mae:.4f}  F {f_mae:.4f}")

    # ---- export for the MD engine (fixed 16-atom cell, batch of 16 frames) ----
    example = (pos_va[:16].clone(),)
    ep = torch.export.export(model, example)
    pkg = aoti_compile_and_package(ep, package_path=PKG_PATH)
    runner = aoti_load_package(pkg)

    e_ref, f_ref = model(pos_va[:16])
    e_pk, f_pk = runner(pos_va[:16].clone())
    de = (e_pk - e_ref.detach()).abs().max().item()
    df = (f_pk - f_ref.detach()).abs().max().item()
    print(f"package vs eager  max|dE| {de:.2e}  max|dF| {df:.2e}")
    pe, pf = evaluate(lambda p: runner(p.clone()), pos_va, e_va, f_va)
    print(f"package val MAE  E {pe:.4f}  F {pf:.4f}")
    ok = de < 1e-4 and df < 1e-3
    print("PACKAGE OK" if ok else "PACKAGE MISMATCH", f"-> {pkg}  ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
