"""Train a small multi-target property regressor with torch.compile, then run the
input-sensitivity audit that the model card needs (d prediction / d descriptor, per target)."""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

N_DESC = 12          # molecular descriptors
TARGETS = ["solubility", "logP", "tox_score"]
N_TGT = len(TARGETS)
HIDDEN = 96


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(F.silu(self.fc1(self.norm(x))))


class PropertyRegressor(nn.Module):
    def __init__(self, n_in=N_DESC, n_out=N_TGT, hidden=HIDDEN, depth=3):
        super().__init__()
        self.inp = nn.Linear(n_in, hidden)
        self.blocks = nn.Sequential(*[ResidualBlock(hidden) for _ in range(depth)])
        self.out = nn.Linear(hidden, n_out)
        self.register_buffer("mu", torch.zeros(n_in))
        self.register_buffer("sigma", torch.ones(n_in))

    def forward(self, x):
        h = self.inp((x - self.mu) / self.sigma)
        return self.out(self.blocks(h))


def synth_dataset(n, gen):
    x = torch.randn(n, N_DESC, generator=gen) * torch.linspace(0.5, 3.0, N_DESC) + 1.0
    y = torch.stack([
        0.8 * x[:, 0] - 0.3 * x[:, 3] * x[:, 4] + torch.sin(x[:, 7]),
        0.5 * x[:, 1] + 0.2 * x[:, 2] ** 2 - 0.1 * x[:, 9],
        torch.tanh(0.4 * x[:, 5] - 0.6 * x[:, 11]) + 0.05 * x[:, 0],
    ], dim=1)
    return x, y + 0.05 * torch.randn(y.shape, generator=gen)


def train(model, step_fn, x, y, epochs=4, batch=128):
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    n = x.shape[0]
    for ep in range(epochs):
        perm = torch.randperm(n)
        total = 0.0
        for i in range(0, n - batch + 1, batch):
            idx = perm[i:i + batch]
            loss = F.mse_loss(step_fn(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item() * batch
        print(f"epoch {ep}  train mse {total / (n - n % batch):.4f}")


def sensitivity_audit(predict, x):
    """Jacobian of every target w.r.t. every descriptor, for each sample: [N_TGT, B, N_DESC]."""
    x = x.detach().clone().requires_grad_(True)
    pred = predict(x)
    # one cotangent per target: e_k broadcast over the batch
    basis = torch.eye(N_TGT).unsqueeze(1).expand(N_TGT, x.shape[0], N_TGT)
    (jac,) = torch.autograd.grad(pred, x, grad_outputs=basis, is_grads_batched=True)
    return jac


def main():
    gen = torch.Generator().manual_seed(42)
    x_tr, y_tr = synth_dataset(4096, gen)
    x_va, y_va = synth_dataset(512, gen)

    model = PropertyRegressor()
    model.mu.copy_(x_tr.mean(0))
    model.sigma.copy_(x_tr.std(0))
    compiled = torch.compile(model)

    t0 = time.time()
    train(model, compiled, x_tr, y_tr)
    print(f"training done in {time.time() - t0:.1f}s")

    with torch.no_grad():
        va_mse = F.mse_loss(compiled(x_va), y_va, reduction="none").mean(0)
    for name, m in zip(TARGETS, va_mse.tolist()):
        print(f"val rmse {name:>10s}: {math.sqrt(m):.4f}")

    jac = sensitivity_audit(compiled, x_va[:256])
    importance = jac.abs().mean(1)                     # [N_TGT, N_DESC]
    for k, name in enumerate(TARGETS):
        top = importance[k].topk(3)
        desc = ", ".join(f"d{int(i)}={v:.3f}" for v, i in zip(top.values.tolist(), top.indices.tolist()))
        print(f"top descriptors for {name:>10s}: {desc}")


if __name__ == "__main__":
    main()
