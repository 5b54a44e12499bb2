"""Robustness training for a streaming sensor classifier: we simulate packet
loss (the radio sends frames in packets of 8 and the first LOST frames of
every packet are dropped) directly inside the model during training.

    python train_plc.py             # eager
    python train_plc.py --compile   # torch.compile
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_CH, T, N_CLASSES = 12, 96, 5
PACKET, LOST = 8, 2


class PacketLoss(nn.Module):
    """Zero the first LOST frames of every PACKET-frame packet (train only)."""

    def forward(self, x):                      # x: [B, T, C], modified in place
        if self.training:
            x.unfold(1, LOST, PACKET).zero_()  # windows at frames 0,1 | 8,9 | 16,17 ...
        return x


class SensorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = PacketLoss()
        self.inp = nn.Linear(N_CH, 64)
        self.conv1 = nn.Conv1d(64, 64, 5, padding=2)
        self.conv2 = nn.Conv1d(64, 64, 5, padding=2)
        self.head = nn.Linear(64, N_CLASSES)

    def forward(self, x):
        x = self.drop(x)
        h = F.gelu(self.inp(x)).transpose(1, 2)
        h = F.gelu(self.conv1(h)) + h
        h = F.gelu(self.conv2(h)) + h
        return self.head(h.mean(-1))


def synth(g, batch):
    """Each class is a different mix of channel frequencies."""
    y = torch.randint(0, N_CLASSES, (batch,), generator=g)
    t = torch.arange(T).float()
    freqs = 0.05 + 0.04 * y.float()[:, None] * torch.linspace(0.5, 1.5, N_CH)[None]
    x = torch.sin(freqs[:, None, :] * t[None, :, None] * 6.28)
    x = x + 0.5 * torch.randn(batch, T, N_CH, generator=g)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=150)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = SensorNet()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    fwd = torch.compile(model) if args.compile else model
    g = torch.Generator().manual_seed(0)
    t0 = time.time()
    for step in range(args.steps):
        x, y = synth(g, 64)
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        x, y = synth(torch.Generator().manual_seed(99), 1024)
        acc = (fwd(x).argmax(-1) == y).float().mean().item()
    print(f"{'compiled' if args.compile else 'eager'}: val acc {acc:.3f} "
          f"(chance {1 / N_CLASSES:.2f}), {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
