"""Release gate for the crop-yield regressor: the torch.compile'd serving path must
match the eager model on the frozen validation fixture before we ship it.

    python yield_parity_gate.py --ckpt yield_ckpt.pt --atol 1e-4
"""
import argparse
import copy
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_BANDS, N_STEPS = 6, 24   # spectral bands x monthly composites


class YieldRegressor(nn.Module):
    def __init__(self, bands=N_BANDS, width=64):
        super().__init__()
        self.conv1 = nn.Conv1d(bands, width, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(width, width, kernel_size=3, padding=2, dilation=2)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Sequential(nn.Linear(2 * width, width), nn.SiLU(), nn.Linear(width, 1))

    def forward(self, x):                      # x: (B, bands, steps)
        h = F.silu(self.conv1(x))
        h = F.silu(self.conv2(h)) + h
        h = self.norm(h.transpose(1, 2))       # (B, steps, width)
        pooled = torch.cat([h.mean(1), h.amax(1)], dim=-1)
        return self.head(pooled).squeeze(-1)


def make_fixture(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, N_BANDS, N_STEPS, generator=g)
    season = torch.sin(torch.linspace(0, 3.14, N_STEPS))
    y = (x[:, 3] * season).sum(-1) - 0.5 * x[:, 1].mean(-1) + 0.05 * torch.randn(n, generator=g)
    return x, y


def train_checkpoint(path, steps=150):
    torch.manual_seed(1)
    model = YieldRegressor()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    x, y = make_fixture(512, seed=11)
    for step in range(steps):
        idx = torch.randint(0, len(x), (64,))
        loss = F.mse_loss(model(x[idx]), y[idx])
        opt.zero_grad(); loss.backward(); opt.step()
    torch.save({"model": model.state_dict(), "val_mse": loss.item()}, path)
    print(f"trained checkpoint -> {path} (last train mse {loss.item():.4f})")


def build_model():
    torch.manual_seed(0)
    return YieldRegressor().eval()


def prepare_serving_variants(model):
    # serving keeps its own module instance so that eval-only tweaks
    # (hooks, dtype casts) never touch the reference copy
    return {"eager": model, "compiled": torch.compile(copy.deepcopy(model))}


def restore_checkpoint(model, path):
    state = torch.load(path, map_location="cpu")
    missing, unexpected = model.load_state_dict(state["model"], strict=True)
    print(f"restored {path}: {sum(p.numel() for p in model.parameters())} params")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="yield_ckpt.pt")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    torch.set_num_threads(1)

    if not os.path.exists(args.ckpt):
        train_checkpoint(args.ckpt)

    model = build_model()
    variants = prepare_serving_variants(model)
    restore_checkpoint(model, args.ckpt)

    x_val, y_val = make_fixture(args.batch, seed=2024)
    results = {}
    with torch.no_grad():
        for name, fn in variants.items():
            t0 = time.perf_counter()
            pred = fn(x_val)
            results[name] = pred
            mse = F.mse_loss(pred, y_val).item()
            print(f"{name:9s} val_mse={mse:.5f}  mean_pred={pred.mean().item():+.4f}  "
                  f"({(time.perf_counter() - t0) * 1e3:.0f} ms)")

    diff = (results["eager"] - results["compiled"]).abs()
    print(f"max|eager-compiled|={diff.max().item():.3e}  mean={diff.mean().item():.3e}  atol={args.atol:g}")
    if diff.max().item() > args.atol:
        print("PARITY GATE FAILED")
        sys.exit(1)
    print("parity gate passed")


if __name__ == "__main__":
    main()
