"""Train the pump-vibration anomaly classifier and package it with AOTInductor
for the gateway boxes (CPU only, no Python model code on the box)."""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from model import PumpNet, make_windows, N_CLASSES

PKG = os.environ.get("PUMP_PKG", "pumpnet.pt2")
WINDOW = 500  # 2 s @ 250 Hz


def train(model, steps=150, bs=64):
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    g = torch.Generator().manual_seed(0)
    model.train()
    for step in range(steps):
        x, y = make_windows(bs, WINDOW, g)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    model = PumpNet()
    train(model)
    model.eval()
    torch.save(model.state_dict(), "pumpnet_state.pt")

    example = (torch.randn(1, 3, WINDOW),)
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, example)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=PKG)
    print(f"packaged {path} in {time.time() - t0:.1f}s")

    runner = torch._inductor.aoti_load_package(path)
    g = torch.Generator().manual_seed(7)
    x, _ = make_windows(8, WINDOW, g)
    with torch.no_grad():
        ref = model(x)
        out = torch.cat([runner(x[i:i + 1]) for i in range(8)])
    print(f"smoke test max|pkg - eager| = {(out - ref).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
