"""Score sampled coarse-grained conformations with a SchNet-style prior model.

Used as a sanity step before launching long simulations: energies of a batch of
decoy / sampled conformations are computed once in eager mode and once with the
compiled model, and we report throughput for both.
"""
import argparse
import time

import torch
import torch.nn as nn

from cfconv_ops import fused_cfconv

torch.manual_seed(0)


class GaussianRBF(nn.Module):
    def __init__(self, n_rbf=32, cutoff=12.0):
        super().__init__()
        self.register_buffer("centers", torch.linspace(0.0, cutoff, n_rbf))
        self.gamma = 0.5 / (cutoff / n_rbf) ** 2

    def forward(self, d):
        return torch.exp(-self.gamma * (d.unsqueeze(-1) - self.centers) ** 2)


class Interaction(nn.Module):
    def __init__(self, hidden, n_rbf, cutoff):
        super().__init__()
        self.cutoff = cutoff
        self.filter_net = nn.Sequential(
            nn.Linear(n_rbf, hidden), nn.Tanh(), nn.Linear(hidden, hidden)
        )
        self.lin_in = nn.Linear(hidden, hidden, bias=False)
        self.lin_out = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, hidden))

    def forward(self, h, rbf, dist, src, dst):
        w = self.filter_net(rbf)
        m = fused_cfconv(self.lin_in(h), w, dist, src, dst, self.cutoff)
        return h + self.lin_out(m)


class CGSchNet(nn.Module):
    def __init__(self, n_types=25, hidden=128, n_rbf=32, n_blocks=3, cutoff=12.0):
        super().__init__()
        self.embed = nn.Embedding(n_types, hidden)
        self.rbf = GaussianRBF(n_rbf, cutoff)
        self.blocks = nn.ModuleList([Interaction(hidden, n_rbf, cutoff) for _ in range(n_blocks)])
        self.readout = nn.Sequential(nn.Linear(hidden, hidden // 2), nn.Tanh(), nn.Linear(hidden // 2, 1))

    def forward(self, pos, types, src, dst, mol_index, n_mols: int):
        dist = (pos[src] - pos[dst]).norm(dim=-1)
        rbf = self.rbf(dist)
        h = self.embed(types)
        for blk in self.blocks:
            h = blk(h, rbf, dist, src, dst)
        e_atom = self.readout(h).squeeze(-1)
        energy = torch.zeros(n_mols, dtype=pos.dtype, device=pos.device)
        return energy.index_add(0, mol_index, e_atom)


def chain_graph(n_beads, n_mols, device):
    """All intra-molecular pairs (i != j); the cosine cutoff zeroes far pairs."""
    ii, jj = torch.meshgrid(torch.arange(n_beads), torch.arange(n_beads), indexing="ij")
    keep = ii != jj
    src0, dst0 = ii[keep], jj[keep]
    offs = (torch.arange(n_mols) * n_beads).repeat_interleave(src0.numel())
    src = src0.repeat(n_mols) + offs
    dst = dst0.repeat(n_mols) + offs
    mol_index = torch.arange(n_mols).repeat_interleave(n_beads)
    return src.to(device), dst.to(device), mol_index.to(device)


def sample_conformations(n_mols, n_beads, device):
    """Random-walk backbones with 3.8 A bead spacing (CA-like)."""
    steps = torch.randn(n_mols, n_beads, 3)
    steps = 3.8 * steps / steps.norm(dim=-1, keepdim=True)
    return steps.cumsum(dim=1).reshape(-1, 3).to(device)


@torch.no_grad()
def score(model, batches, src, dst, mol_index, n_mols):
    out = []
    t0 = time.perf_counter()
    for pos, types in batches:
        out.append(model(pos, types, src, dst, mol_index, n_mols))
    return torch.cat(out), time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--beads", type=int, default=10)      # chignolin CA model
    ap.add_argument("--mols", type=int, default=64)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--compile", action="store_true", default=True)
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"device={device} torch={torch.__version__}")

    model = CGSchNet().to(device).eval()
    src, dst, mol_index = chain_graph(args.beads, args.mols, device)
    types = torch.tensor([3, 7, 1, 12, 5, 5, 9, 14, 2, 3][: args.beads], device=device).repeat(args.mols)
    batches = [(sample_conformations(args.mols, args.beads, device), types) for _ in range(args.batches)]

    e_eager, t_eager = score(model, batches, src, dst, mol_index, args.mols)
    print(f"eager   : {len(batches) * args.mols} conformations in {t_eager:.3f}s, "
          f"mean E = {e_eager.mean().item():.5f}")

    if args.compile:
        cmodel = torch.compile(model)
        score(cmodel, batches[:1], src, dst, mol_index, args.mols)  # warm-up / compile
        e_comp, t_comp = score(cmodel, batches, src, dst, mol_index, args.mols)
        print(f"compiled: {len(batches) * args.mols} conformations in {t_comp:.3f}s, "
              f"mean E = {e_comp.mean().item():.5f}")
        print(f"max |E_eager - E_compiled| = {(e_eager - e_comp).abs().max().item():.3e}")


if __name__ == "__main__":
    main()
