"""Human-activity recognition from 6-axis IMU windows (synthetic data here).

    python train_har.py           # compiled
    python train_har.py --eager
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from ema_ops import causal_ema


class HARNet(nn.Module):
    def __init__(self, channels=6, hidden=64, ncls=6, alpha=0.25):
        super().__init__()
        self.alpha = alpha
        self.embed = nn.Linear(channels, hidden)
        self.conv1 = nn.Conv1d(hidden, hidden, 5, padding=2)
        self.conv2 = nn.Conv1d(hidden, hidden, 5, padding=2)
        self.norm = nn.LayerNorm(hidden)
        self.head = nn.Linear(2 * hidden, ncls)

    def forward(self, x):                      # x: (B, T, C) as it comes from the loader
        h = self.embed(x)                      # (B, T, H)
        h = h.transpose(1, 2)                  # (B, H, T): time last, for the convs and the EMA
        h = h + causal_ema(h, self.alpha)      # smooth each feature along time
        h = F.gelu(self.conv1(h))
        h = F.gelu(self.conv2(h))
        h = self.norm(h.transpose(1, 2))       # (B, T, H)
        feats = torch.cat([h.mean(1), h.amax(1)], -1)
        return self.head(feats)


def synthetic_imu(bs, T, gen):
    y = torch.randint(0, 6, (bs,), generator=gen)
    t = torch.linspace(0, 4 * torch.pi, T)
    freq = (y.float() + 1.0)[:, None, None] * 0.5
    x = torch.sin(freq * t[None, :, None] + torch.rand(bs, 1, 6, generator=gen) * 6.28)
    return x + 0.3 * torch.randn(bs, T, 6, generator=gen), y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = HARNet()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    fwd = model if args.eager else torch.compile(model)

    t0 = time.time()
    for step in range(1, args.steps + 1):
        x, y = synthetic_imu(32, 128, gen)
        loss = F.cross_entropy(fwd(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0:
            print(f"step {step:4d}  loss {loss.item():.3f}  ({time.time() - t0:.1f}s)", flush=True)

    model.eval()
    with torch.no_grad():
        x, y = synthetic_imu(512, 128, gen)
        acc = (fwd(x).argmax(-1) == y).float().mean().item()
    print(f"val acc {acc:.3f}")


if __name__ == "__main__":
    main()
