"""Patch-based transformer classifier for wearable IMU activity recognition.

Channel-independent patching (PatchTST-style): every IMU channel is cut into
fixed-length patches, each patch is embedded, and a shared transformer encoder
runs over the patch sequence of each channel. Channel summaries are then mixed
by a small MLP head.

Usage:
    python train_har.py            # compiled training (default)
    python train_har.py --eager    # reference run without torch.compile
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

ACTIVITIES = ["walk", "upstairs", "downstairs", "sit", "stand", "lie"]


class SyntheticIMU(Dataset):
    """Stand-in for the UCI-HAR style windows: 9 channels (acc xyz, gyro xyz, body acc xyz)."""

    def __init__(self, n, window=128, channels=9, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, len(ACTIVITIES), (n,), generator=g)
        t = torch.arange(window, dtype=torch.float32) / 50.0  # 50 Hz
        freqs = torch.tensor([1.8, 2.2, 2.0, 0.0, 0.0, 0.0])
        amps = torch.tensor([1.0, 1.3, 1.5, 0.05, 0.08, 0.03])
        offs = torch.tensor([0.0, 0.2, -0.2, 0.6, 0.9, -0.9])
        ch_gain = torch.linspace(0.5, 1.5, channels)
        x = torch.empty(n, window, channels)
        for i in range(n):
            k = self.labels[i]
            phase = torch.rand(channels, generator=g) * 2 * math.pi
            sig = amps[k] * torch.sin(2 * math.pi * freqs[k] * t[:, None] + phase[None, :])
            noise = 0.15 * torch.randn(window, channels, generator=g)
            x[i] = ch_gain * (sig + offs[k]) + noise
        self.x = x

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.x[i], self.labels[i]


class PatchEncoder(nn.Module):
    def __init__(self, channels=9, window=128, patch_len=16, d_model=64, n_heads=4,
                 n_layers=2, n_classes=6, dropout=0.0):
        super().__init__()
        assert window % patch_len == 0
        self.channels = channels
        self.patch_len = patch_len
        self.n_patches = window // patch_len
        self.d_model = d_model

        self.in_norm = nn.BatchNorm1d(channels)
        self.patch_embed = nn.Linear(patch_len, d_model)
        self.pos = nn.Parameter(torch.zeros(1, self.n_patches, d_model))
        nn.init.trunc_normal_(self.pos, std=0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=2 * d_model,
                                           dropout=dropout, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.channel_proj = nn.Linear(d_model, 16)
        self.head = nn.Sequential(
            nn.Linear(channels * 16, 128),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(128, n_classes),
        )

    def forward(self, x):
        # x: (batch, time, channels) as delivered by the loader
        b = x.shape[0]
        x = self.in_norm(x.transpose(1, 2))                       # (b, c, t)
        x = x.view(b * self.channels, self.n_patches, self.patch_len)
        z = self.patch_embed(x) + self.pos                        # (b*c, n, d)
        z = self.encoder(z)
        z = z.mean(dim=1)                                         # (b*c, d)
        z = F.gelu(self.channel_proj(z))                          # (b*c, 16)
        z = z.view(b, self.channels * 16)
        return self.head(z)


def evaluate(model, loader):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(-1) == y).sum().item()
            total += y.numel()
    model.train()
    return loss_sum / total, correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    train_ds = SyntheticIMU(768, seed=1)
    val_ds = SyntheticIMU(192, seed=2)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=64)

    model = PatchEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3,
                                                total_steps=args.epochs * len(train_dl))
    step_model = model if args.eager else torch.compile(model)
    print(f"torch {torch.__version__} | mode={'eager' if args.eager else 'compiled'} | "
          f"params={sum(p.numel() for p in model.parameters())/1e3:.1f}k")

    t0 = time.time()
    for epoch in range(args.epochs):
        running = 0.0
        for step, (x, y) in enumerate(train_dl):
            logits = step_model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            running += loss.item()
            if step == 0 and epoch == 0:
                print(f"first step done in {time.time() - t0:.1f}s, loss {loss.item():.4f}")
        val_loss, val_acc = evaluate(step_model, val_dl)
        print(f"epoch {epoch}: train_loss {running / len(train_dl):.4f} "
              f"val_loss {val_loss:.4f} val_acc {val_acc:.3f}")
    print(f"total {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
