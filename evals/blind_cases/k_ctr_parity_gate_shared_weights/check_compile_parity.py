"""CI gate: the compiled training step must match the eager training step.

Runs one optimisation step of the click-through-rate model in eager mode and
one with torch.compile, then compares loss, logits and parameter gradients.
"""
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

LOSS_RTOL = 1e-4
GRAD_ATOL = 1e-5
LOGIT_ATOL = 1e-5


class FieldEmbedding(nn.Module):
    def __init__(self, cardinalities, dim):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(c, dim) for c in cardinalities)

    def forward(self, cat):
        return torch.stack([t(cat[:, i]) for i, t in enumerate(self.tables)], dim=1)


class CrossLayer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.w = nn.Linear(width, width)

    def forward(self, x0, x):
        return x0 * self.w(x) + x


class CTRModel(nn.Module):
    def __init__(self, cardinalities=(50, 30, 20, 12), n_dense=8, dim=16, n_cross=2, hidden=64):
        super().__init__()
        self.emb = FieldEmbedding(cardinalities, dim)
        width = len(cardinalities) * dim + n_dense
        self.dense_norm = nn.LayerNorm(n_dense)
        self.cross = nn.ModuleList(CrossLayer(width) for _ in range(n_cross))
        self.deep = nn.Sequential(
            nn.Linear(width, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )
        self.head = nn.Linear(width + hidden, 1)

    def forward(self, cat, dense):
        e = self.emb(cat).flatten(1)
        x0 = torch.cat([e, self.dense_norm(dense)], dim=1)
        x = x0
        for layer in self.cross:
            x = layer(x0, x)
        return self.head(torch.cat([x, self.deep(x0)], dim=1)).squeeze(-1)


def make_batch(n=256, seed=1234):
    g = torch.Generator().manual_seed(seed)
    cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in (50, 30, 20, 12)], dim=1)
    dense = torch.randn(n, 8, generator=g)
    label = (torch.rand(n, generator=g) < 0.3).float()
    return cat, dense, label


def train_step(fn, model, opt, batch):
    cat, dense, label = batch
    logits = fn(cat, dense)
    loss = F.binary_cross_entropy_with_logits(logits, label)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    opt.step()
    return loss.detach(), logits.detach(), grads


def main():
    torch.manual_seed(0)
    model = CTRModel()
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = make_batch()

    compiled = torch.compile(model)

    opt.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    loss_e, logits_e, grads_e = train_step(model, model, opt, batch)
    t_eager = time.perf_counter() - t0

    t0 = time.perf_counter()
    loss_c, logits_c, grads_c = train_step(compiled, model, opt, batch)
    t_comp = time.perf_counter() - t0

    print(f"eager step {t_eager*1e3:.1f} ms, compiled step (incl. compile) {t_comp:.1f} s")
    print(f"loss eager={loss_e.item():.6f} compiled={loss_c.item():.6f}")
    logit_diff = (logits_e - logits_c).abs().max().item()
    print(f"max |logit diff| = {logit_diff:.3e}")

    failures = []
    if abs(loss_e.item() - loss_c.item()) > LOSS_RTOL * abs(loss_e.item()):
        failures.append("loss")
    if logit_diff > LOGIT_ATOL:
        failures.append("logits")
    worst = []
    for name, ge in grads_e.items():
        gc = grads_c[name]
        d = (ge - gc).abs().max().item()
        ratio = (gc.norm() / ge.norm().clamp_min(1e-12)).item()
        worst.append((d, name, ratio))
        if d > GRAD_ATOL:
            failures.append(f"grad:{name}")
    worst.sort(reverse=True)
    for d, name, ratio in worst[:5]:
        print(f"  grad {name:32s} max|diff|={d:.3e}  |g_c|/|g_e|={ratio:.3f}")

    if failures:
        print(f"PARITY GATE FAILED ({len(failures)} checks): {', '.join(failures[:6])}"
              f"{' ...' if len(failures) > 6 else ''}")
        sys.exit(1)
    print("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
