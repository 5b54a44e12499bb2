"""Substation load forecaster: fp16 mixed-precision training on CPU.

Raw SCADA readings come in physical units (kW, kVAr, A, V) and some of them are
far outside the float16 range, so the input projection + norm run in float32 and
the rest of the network runs under autocast(float16) with a GradScaler.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

FEATURES = [
    ("hour_sin", 1.0), ("hour_cos", 1.0), ("dow_sin", 1.0), ("dow_cos", 1.0),
    ("temp_c", 15.0), ("humidity_pct", 60.0), ("feeder_current_a", 850.0),
    ("bus_voltage_v", 11000.0), ("active_power_kw", 90000.0), ("reactive_power_kvar", 30000.0),
    ("cum_energy_kwh", 250000.0), ("ev_chargers_online", 40.0),
]
N_FEAT = len(FEATURES)
HORIZON = 4


def make_windows(n_series, window, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(window + HORIZON, dtype=torch.float32)
    xs, ys = [], []
    for _ in range(n_series):
        phase = torch.rand(1, generator=g) * 2 * math.pi
        daily = torch.sin(2 * math.pi * t / 24 + phase)
        cols = []
        for name, scale in FEATURES:
            noise = 0.05 * torch.randn(t.shape, generator=g)
            if name.endswith(("sin", "cos")):
                cols.append(daily + noise)
            else:
                cols.append(scale * (1.0 + 0.2 * daily + noise).abs())
        series = torch.stack(cols, -1)
        target = (series[:, 8] / 90000.0).log1p()          # normalised active power
        xs.append(series[:window])
        ys.append(target[window:window + HORIZON])
    return torch.stack(xs), torch.stack(ys)


class RawFeatureStem(nn.Module):
    """Projects raw physical readings; kept in fp32 (values overflow fp16)."""

    def __init__(self, d_model):
        super().__init__()
        self.proj = nn.Linear(N_FEAT, d_model)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            h = self.norm(self.proj(x.float()))
        return h


class TemporalBlock(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, h, causal_mask):
        a = self.ln1(h)
        a, _ = self.attn(a, a, a, attn_mask=causal_mask, need_weights=False)
        h = h + self.drop(a)
        return h + self.drop(self.ff(self.ln2(h)))


class LoadForecaster(nn.Module):
    def __init__(self, window, d_model=64, n_heads=4, n_layers=2, dropout=0.0):
        super().__init__()
        self.stem = RawFeatureStem(d_model)
        self.pos = nn.Parameter(torch.zeros(1, window, d_model))
        self.blocks = nn.ModuleList([TemporalBlock(d_model, n_heads, dropout) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, HORIZON)
        self.register_buffer(
            "causal_mask", torch.triu(torch.ones(window, window, dtype=torch.bool), diagonal=1), persistent=False
        )

    def forward(self, x):
        h = self.stem(x) + self.pos
        for blk in self.blocks:
            h = blk(h, self.causal_mask)
        return self.head(h[:, -1]).float()


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
        pred = model(x)
    model.train()
    return F.mse_loss(pred, y).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--window", type=int, default=48)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()

    torch.manual_seed(0)
    x_tr, y_tr = make_windows(512, args.window, seed=1)
    x_va, y_va = make_windows(128, args.window, seed=2)

    model = LoadForecaster(args.window)
    step_model = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scaler = torch.amp.GradScaler("cpu")

    print(f"mode={'compiled' if args.compile else 'eager'}  val_mse@0={evaluate(model, x_va, y_va):.4f}")
    skipped = 0
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, x_tr.shape[0], (args.batch,))
        xb, yb = x_tr[idx], y_tr[idx]
        with torch.autocast("cpu", dtype=torch.float16):
            pred = step_model(xb)
            loss = F.mse_loss(pred, yb)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scale_before = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        if scaler.get_scale() < scale_before:
            skipped += 1
        if step % 10 == 0:
            print(f"step {step:3d}  loss={loss.item():.4f}  scale={scaler.get_scale():.3g}  "
                  f"skipped_steps={skipped}  val_mse={evaluate(model, x_va, y_va):.4f}")
    print(f"done in {time.perf_counter() - t0:.1f}s  skipped_steps={skipped}/{args.steps}  "
          f"final_scale={scaler.get_scale():.3g}")


if __name__ == "__main__":
    main()
