"""Compile gate for a tabular denoising autoencoder (blind A/B batch 62's fc, pytorch#143431): the corruptor draws
Gaussian jitter on every call but adds it only when jitter_std > 0. AOTAutograd drops the unused draw, eager still
takes it from the global generator, so from the second step the batches and masks differ. The gate trains a few
seeded steps eagerly and compiled (aot_eager, no Inductor) and compares the losses. FIXED=1: drawn only when used."""
import os
import sys

import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"


class Corruptor(nn.Module):
    def __init__(self, swap_p=0.15, jitter_std=0.0):
        super().__init__()
        self.swap_p, self.jitter_std = swap_p, jitter_std

    def forward(self, x):
        mask = torch.rand_like(x) < self.swap_p
        donor = x[torch.randint(0, x.shape[0], (x.shape[0],))]
        out = torch.where(mask, donor, x)
        if FIXED:
            if self.jitter_std > 0.0:
                out = out + self.jitter_std * torch.randn_like(out)
            return out
        noise = torch.randn_like(out)
        if self.jitter_std > 0.0:
            out = out + self.jitter_std * noise
        return out


class DAE(nn.Module):
    def __init__(self, d=24):
        super().__init__()
        self.corrupt = Corruptor()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        return nn.functional.mse_loss(self.net(self.corrupt(x)), x)


def train(step_fn, model, data, steps=4):
    torch.manual_seed(1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        batch = data[torch.randint(0, data.shape[0], (64,))]
        loss = step_fn(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    data = torch.randn(512, 24)
    init = DAE().state_dict()
    eager_m, comp_m = DAE(), DAE()
    eager_m.load_state_dict(init)
    comp_m.load_state_dict(init)
    ref = train(eager_m, eager_m, data)
    got = train(torch.compile(comp_m, backend="aot_eager"), comp_m, data)
    worst = 0.0
    for i, (a, b) in enumerate(zip(ref, got)):
        rel = abs(a - b) / abs(a)
        worst = max(worst, rel)
        print(f"step {i}: eager {a:.6f} compiled {b:.6f} rel diff {rel:.2e}")
    if worst > 1e-5:
        print(f"COMPILE GATE FAILED: worst rel diff {worst:.2e} > 1e-5")
        sys.exit(1)
    print("COMPILE GATE PASSED")


if __name__ == "__main__":
    main()
