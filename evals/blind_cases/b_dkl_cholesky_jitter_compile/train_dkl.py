"""Deep-kernel GP regression for sensor drift calibration.

Exact GP marginal likelihood on learned features (deep kernel learning).
Repeated measurements per set-point make the kernel matrix close to singular,
so the Cholesky goes through a jitter-retry helper like gpytorch's psd_safe_cholesky.

    python train_dkl.py             # eager
    python train_dkl.py --compile   # compiled loss
"""
import argparse
import math
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


def make_sensor_data(n_setpoints=96, repeats=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    temp = torch.linspace(-1.0, 1.0, n_setpoints)
    humid = torch.rand(n_setpoints, generator=g) * 2 - 1
    x = torch.stack([temp, humid, temp * humid], dim=-1).repeat_interleave(repeats, dim=0)
    drift = torch.sin(3.0 * x[:, 0]) + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2]
    y = drift + 0.002 * torch.randn(len(x), generator=g)
    return x, y


def psd_safe_cholesky(A, jitter=1e-6, max_tries=5):
    """Cholesky that retries with growing diagonal jitter if A is not numerically PD."""
    try:
        return torch.linalg.cholesky(A)
    except torch.linalg.LinAlgError:
        eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device)
        for i in range(max_tries):
            jitter_i = jitter * (10 ** i)
            try:
                L = torch.linalg.cholesky(A + jitter_i * eye)
                warnings.warn(f"A not p.d., added jitter of {jitter_i:.1e} to the diagonal", RuntimeWarning)
                return L
            except torch.linalg.LinAlgError:
                continue
        raise


class DeepKernelGP(nn.Module):
    def __init__(self, in_dim=3, feat_dim=2, hidden=64):
        super().__init__()
        self.features = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, feat_dim),
        )
        self.log_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.log_outputscale = nn.Parameter(torch.tensor(0.0))
        self.raw_noise = nn.Parameter(torch.tensor(-3.0))
        self.mean = nn.Parameter(torch.tensor(0.0))

    def noise(self):
        return F.softplus(self.raw_noise) + 1e-6

    def kernel(self, z1, z2):
        d2 = torch.cdist(z1 / self.log_lengthscale.exp(), z2 / self.log_lengthscale.exp()).pow(2)
        return self.log_outputscale.exp() * torch.exp(-0.5 * d2)


def neg_mll(model, x, y):
    z = model.features(x)
    K = model.kernel(z, z) + model.noise() * torch.eye(len(x))
    L = psd_safe_cholesky(K)
    r = (y - model.mean).unsqueeze(-1)
    alpha = torch.cholesky_solve(r, L)
    n = len(x)
    nll = 0.5 * (r * alpha).sum() + L.diagonal().log().sum() + 0.5 * n * math.log(2 * math.pi)
    return nll / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--lr", type=float, default=0.03)
    args = ap.parse_args()

    torch.manual_seed(0)
    x, y = make_sensor_data()
    model = DeepKernelGP()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = torch.compile(neg_mll) if args.compile else neg_mll

    n_jitter = 0
    t0 = time.time()
    for step in range(1, args.steps + 1):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = loss_fn(model, x, y)
        n_jitter += sum(issubclass(w.category, RuntimeWarning) for w in caught)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step == 1 or step % 25 == 0:
            print(f"step {step:4d}  nll {loss.item():8.4f}  noise {model.noise().item():.2e}  "
                  f"lengthscale {model.log_lengthscale.exp().item():.3f}  jitter retries {n_jitter}  "
                  f"({time.time() - t0:.1f}s)", flush=True)
    print(f"done: final nll {loss.item():.4f}, noise {model.noise().item():.2e}, jitter retries {n_jitter}")


if __name__ == "__main__":
    main()
