"""Release gate for the heading-drift corrector (bf16 CPU serving build).

Fits the small corrector on simulated IMU windows, casts it to bfloat16 for the
CPU serving image, compiles it, and checks the compiled model against the eager
bf16 model on the held-out windows before the artifact is published.
"""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TWO_PI = 2 * math.pi
N_SECTORS = 16
# per-sector wind exposure used by the simulator (fixed site survey table)
SECTOR_BIAS = torch.tensor([0.12, -0.31, 0.44, 0.05, -0.18, 0.27, -0.40, 0.33,
                            -0.07, 0.21, -0.26, 0.38, -0.12, 0.09, -0.35, 0.16])
N_TRAIN = 6000
N_VAL = 2048
WINDOW = 16
SEED = 7

# bf16 gate tolerances (same numbers as the fp16 gate for the other heads)
ATOL = 5e-2
RTOL = 5e-2
MAX_BAD_FRACTION = 0.0


def simulate_windows(n, generator):
    """Simulated IMU windows: integrated yaw (unwrapped, rad), yaw rate, speed."""
    start_yaw = (torch.rand(n, 1, generator=generator) * 2 - 1) * 90.0
    yaw_rate = torch.randn(n, 1, generator=generator) * 0.3
    t = torch.arange(WINDOW, dtype=torch.float32).view(1, -1) * 0.1
    yaw = start_yaw + yaw_rate * t + 0.01 * torch.randn(n, WINDOW, generator=generator)
    speed = (torch.rand(n, 1, generator=generator) * 12.0).expand(n, WINDOW)
    speed = speed + 0.2 * torch.randn(n, WINDOW, generator=generator)
    rate = torch.diff(yaw, dim=1, prepend=yaw[:, :1]) / 0.1
    x = torch.stack([yaw, rate, speed], dim=-1)  # (n, WINDOW, 3)
    # target: lateral drift correction, depends on heading and speed
    heading = torch.remainder(yaw[:, -1], TWO_PI)
    sector = (heading / TWO_PI * N_SECTORS).long().clamp(0, N_SECTORS - 1)
    y = (0.4 * torch.sin(heading) * speed[:, -1] / 12.0 + 0.2 * torch.cos(2 * heading)
         + 0.1 * yaw_rate[:, 0] + SECTOR_BIAS[sector] * speed[:, -1] / 12.0)
    return x, y.unsqueeze(-1)


class HeadingFeatures(nn.Module):
    """Turns raw integrated yaw into bounded heading features + a wind-sector id."""

    def __init__(self, sector_dim=8):
        super().__init__()
        self.sector_emb = nn.Embedding(N_SECTORS, sector_dim)

    def forward(self, x):
        yaw, rate, speed = x.unbind(-1)
        heading = torch.fmod(yaw, TWO_PI)
        heading = torch.where(heading < 0, heading + TWO_PI, heading)
        phase = heading / TWO_PI  # [0, 1)
        sector = (phase * N_SECTORS).long().clamp(0, N_SECTORS - 1)
        feats = torch.stack(
            [phase, torch.sin(heading), torch.cos(heading), rate * 0.5, speed / 12.0],
            dim=-1,
        )
        return torch.cat([feats, self.sector_emb(sector)], dim=-1)


class DriftCorrector(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.features = HeadingFeatures()
        self.temporal = nn.Conv1d(5 + 8, hidden, kernel_size=3, padding=1)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Sequential(
            nn.Linear(hidden * 2, hidden),
            nn.GELU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        f = self.features(x)                       # (B, T, 13)
        h = self.temporal(f.transpose(1, 2))       # (B, H, T)
        h = self.norm(F.gelu(h).transpose(1, 2))   # (B, T, H)
        pooled = torch.cat([h.mean(dim=1), h[:, -1]], dim=-1)
        return self.head(pooled)


def fit(model, x, y, steps=300, batch=256):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    g = torch.Generator().manual_seed(SEED + 1)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (batch,), generator=g)
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"  step {step:4d}  train mse {loss.item():.4f}")
    model.eval()
    return model


@torch.no_grad()
def predict(model, x, batch=512):
    outs = [model(x[i:i + batch]) for i in range(0, x.shape[0], batch)]
    return torch.cat(outs)


def main():
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    x_train, y_train = simulate_windows(N_TRAIN, gen)
    x_val, y_val = simulate_windows(N_VAL, gen)

    print("fitting drift corrector (fp32)")
    t0 = time.time()
    model = fit(DriftCorrector(), x_train, y_train)
    print(f"  fit took {time.time() - t0:.1f}s")

    with torch.no_grad():
        fp32_val = F.mse_loss(predict(model, x_val), y_val).item()
    print(f"fp32 val mse: {fp32_val:.4f}")

    # serving build: bf16 weights and inputs on CPU
    serve = model.to(torch.bfloat16)
    xv = x_val.to(torch.bfloat16)

    eager_out = predict(serve, xv)
    compiled = torch.compile(serve)
    t0 = time.time()
    comp_out = predict(compiled, xv)
    print(f"compiled warm-up + val pass: {time.time() - t0:.1f}s")

    eager_mse = F.mse_loss(eager_out.float(), y_val).item()
    comp_mse = F.mse_loss(comp_out.float(), y_val).item()
    print(f"bf16 eager val mse:    {eager_mse:.4f}")
    print(f"bf16 compiled val mse: {comp_mse:.4f}")

    diff = (comp_out.float() - eager_out.float()).abs()
    tol = ATOL + RTOL * eager_out.float().abs()
    bad = (diff > tol).squeeze(-1)
    bad_frac = bad.float().mean().item()
    print(f"max |compiled - eager|: {diff.max().item():.4f}")
    print(f"samples outside tolerance: {int(bad.sum())}/{N_VAL} ({100 * bad_frac:.2f}%)")
    if bad.any():
        worst = torch.topk(diff.squeeze(-1), k=min(5, int(bad.sum()))).indices
        for i in worst.tolist():
            print(f"  sample {i:5d}: eager {eager_out[i, 0].item():+.4f}  compiled {comp_out[i, 0].item():+.4f}"
                  f"  target {y_val[i, 0].item():+.4f}")

    if bad_frac > MAX_BAD_FRACTION:
        print("GATE FAILED: compiled bf16 model does not match eager bf16 model")
        sys.exit(1)
    print("GATE PASSED")


if __name__ == "__main__":
    main()
