"""Stylus gesture recognizer: train, evaluate, and export the serving artifact.

The serving runtime loads a torch.export .pt2 and feeds one stroke sequence per
request; sequences are anywhere from a few dozen to ~1000 pen samples long.
"""
import math
import os
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim, export

SEED = 7
NUM_CLASSES = 12
FEATS = 4            # dx, dy, pressure, pen_up
MAX_POINTS = 1024
ARTIFACT = os.environ.get("GESTURE_ARTIFACT", "/tmp/gesture_gru.pt2")

torch.manual_seed(SEED)
random.seed(SEED)


# ----------------------------------------------------------------------------
# synthetic pen data (stand-in for the recorded gesture corpus)
# ----------------------------------------------------------------------------
def make_stroke(label: int, n_points: int) -> torch.Tensor:
    t = torch.linspace(0, 1, n_points)
    k = label + 1
    x = torch.cos(2 * math.pi * t * (1 + k % 4)) * (0.5 + 0.1 * k)
    y = torch.sin(2 * math.pi * t * (1 + k // 4)) * (0.7 - 0.03 * k)
    x = x + 0.02 * torch.randn(n_points)
    y = y + 0.02 * torch.randn(n_points)
    dx = torch.diff(x, prepend=x[:1]) * 50
    dy = torch.diff(y, prepend=y[:1]) * 50
    pressure = 0.6 + 0.3 * torch.sin(math.pi * t * k) + 0.05 * torch.randn(n_points)
    pen_up = (torch.rand(n_points) < 0.01 * (k % 3)).float()
    return torch.stack([dx, dy, pressure, pen_up], dim=-1)


def make_batch(batch_size: int, n_points: int):
    labels = torch.randint(0, NUM_CLASSES, (batch_size,))
    strokes = torch.stack([make_stroke(int(l), n_points) for l in labels])
    return strokes, labels


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class StrokeEncoder(nn.Module):
    def __init__(self, feats=FEATS, conv_ch=64, hidden=96, layers=2):
        super().__init__()
        self.norm = nn.LayerNorm(feats)
        self.conv = nn.Sequential(
            nn.Conv1d(feats, conv_ch, kernel_size=5, padding=2),
            nn.GELU(),
            nn.Conv1d(conv_ch, conv_ch, kernel_size=5, padding=2),
            nn.GELU(),
        )
        self.rnn = nn.GRU(conv_ch, hidden, num_layers=layers, batch_first=True)
        self.attn = nn.Linear(hidden, 1)

    def forward(self, strokes):
        h = self.norm(strokes)
        h = self.conv(h.transpose(1, 2)).transpose(1, 2)
        seq, _ = self.rnn(h)
        w = torch.softmax(self.attn(seq).squeeze(-1), dim=-1)
        pooled = torch.einsum("bt,bth->bh", w, seq)
        return torch.cat([pooled, seq[:, -1]], dim=-1)


class GestureClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = StrokeEncoder()
        self.head = nn.Sequential(nn.Linear(192, 128), nn.GELU(), nn.Linear(128, NUM_CLASSES))

    def forward(self, strokes):
        return self.head(self.encoder(strokes))


# ----------------------------------------------------------------------------
# train / eval
# ----------------------------------------------------------------------------
def train(model, steps=40):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
    model.train()
    for step in range(steps):
        n_points = random.choice([48, 96, 160])
        x, y = make_batch(32, n_points)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            print(f"step {step:3d}  len {n_points:3d}  loss {loss.item():.4f}")


@torch.no_grad()
def evaluate(model):
    model.eval()
    correct = total = 0
    for n_points in (40, 120, 300):
        x, y = make_batch(64, n_points)
        correct += (model(x).argmax(-1) == y).sum().item()
        total += y.numel()
    return correct / total


# ----------------------------------------------------------------------------
# export for serving
# ----------------------------------------------------------------------------
def export_for_serving(model, path):
    model.eval()
    example, _ = make_batch(1, 120)
    points = Dim("points", min=8, max=MAX_POINTS)
    ep = export(model, (example,), dynamic_shapes={"strokes": {1: points}})
    torch.export.save(ep, path)
    return path


@torch.no_grad()
def check_artifact(model, path, lengths=(23, 57, 120, 311, 640)):
    served = torch.export.load(path).module()
    worst = 0.0
    for n in lengths:
        x, _ = make_batch(1, n)
        diff = (served(x) - model(x)).abs().max().item()
        worst = max(worst, diff)
        print(f"  len {n:4d}  max|served - eager| = {diff:.3e}")
    return worst


def main():
    t0 = time.time()
    model = GestureClassifier()
    print(f"torch {torch.__version__}  params {sum(p.numel() for p in model.parameters())}")
    train(model)
    print(f"eval accuracy: {evaluate(model):.3f}")

    print("exporting serving artifact ...")
    path = export_for_serving(model, ARTIFACT)
    print(f"saved {path}")
    worst = check_artifact(model, path)
    status = "PASS" if worst < 1e-4 else "FAIL"
    print(f"artifact parity: {status} (worst {worst:.3e})  total {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
