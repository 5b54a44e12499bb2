"""Physics-informed network for the 2-D Poisson problem

    -lap(u) = f   on (0,1)^2,   u = 0 on the boundary,
    f(x, y) = 2 pi^2 sin(pi x) sin(pi y)   (exact solution u* = sin(pi x) sin(pi y)).

The boundary condition is built into the ansatz u(p) = x(1-x)y(1-y) * N(p), so the loss is the PDE residual
only. The per-point Laplacian comes from torch.func (vmap over a per-point Hessian).
"""
import argparse
import math
import time

import torch
import torch.nn as nn
from torch.func import hessian, vmap


class FourierFeatures(nn.Module):
    def __init__(self, in_dim, n_freq, scale=1.0):
        super().__init__()
        self.register_buffer("B", torch.randn(in_dim, n_freq) * scale)

    def forward(self, p):
        proj = 2 * math.pi * p @ self.B
        return torch.cat([p, torch.sin(proj), torch.cos(proj)], dim=-1)


class MLP(nn.Module):
    def __init__(self, in_dim=2, width=48, depth=4, n_freq=8):
        super().__init__()
        self.features = FourierFeatures(in_dim, n_freq)
        layers, d = [], in_dim + 2 * n_freq
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, p):
        return self.net(self.features(p))


class PoissonPINN(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.body = MLP(**kw)

    def u_point(self, p):
        """Solution at a single point p of shape (2,) -> scalar."""
        x, y = p[0], p[1]
        envelope = x * (1 - x) * y * (1 - y)
        return envelope * self.body(p.unsqueeze(0)).reshape(())

    def forward(self, pts):
        return vmap(self.u_point)(pts)

    def laplacian(self, pts):
        H = vmap(hessian(self.u_point))(pts)  # (N, 2, 2)
        return H.diagonal(dim1=-2, dim2=-1).sum(-1)


def source_term(pts):
    return 2 * math.pi**2 * torch.sin(math.pi * pts[:, 0]) * torch.sin(math.pi * pts[:, 1])


def exact(pts):
    return torch.sin(math.pi * pts[:, 0]) * torch.sin(math.pi * pts[:, 1])


def residual_loss(model, pts):
    res = -model.laplacian(pts) - source_term(pts)
    return (res**2).mean()


def sample_interior(n, gen):
    # Latin-hypercube-ish stratified samples in the unit square
    k = int(math.sqrt(n))
    ii, jj = torch.meshgrid(torch.arange(k), torch.arange(k), indexing="ij")
    jitter = torch.rand(k, k, 2, generator=gen)
    pts = torch.stack([(ii + jitter[..., 0]) / k, (jj + jitter[..., 1]) / k], dim=-1)
    return pts.reshape(-1, 2)


@torch.no_grad()
def evaluate(model, n_grid=41):
    g = torch.linspace(0, 1, n_grid)
    X, Y = torch.meshgrid(g, g, indexing="ij")
    pts = torch.stack([X.reshape(-1), Y.reshape(-1)], dim=-1)
    pred = model(pts)
    ref = exact(pts)
    return (torch.linalg.norm(pred - ref) / torch.linalg.norm(ref)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    model = PoissonPINN()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)

    loss_fn = residual_loss if args.no_compile else torch.compile(residual_loss)

    print(f"initial rel-L2 error vs exact: {evaluate(model):.4f}")
    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        pts = sample_interior(args.points, gen)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model, pts)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        sched.step()
        dt = time.perf_counter() - t0
        if step == 1 or step % 10 == 0:
            print(f"step {step:4d} | residual {loss.item():.4e} | grad-norm {gnorm.item():.3e} | {dt * 1000:.1f} ms")
    print(f"trained {args.steps} steps in {time.perf_counter() - t_start:.1f}s")
    print(f"final rel-L2 error vs exact: {evaluate(model):.4f}")


if __name__ == "__main__":
    main()
