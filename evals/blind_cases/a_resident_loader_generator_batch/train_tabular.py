"""Small tabular classifier (customer-segment prediction) trained from a device-resident dataset."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from resident_data import ResidentDataset

N_FEATURES, N_CLASSES = 24, 5


def make_data(n, g):
    centers = torch.randn(N_CLASSES, N_FEATURES, generator=g) * 1.2
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    x = centers[y] + torch.randn(n, N_FEATURES, generator=g) * 2.6
    x[:, :4] = torch.tanh(x[:, :4]) * 3  # a few squashed 'ratio' features
    return x, y


class SegmentNet(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.norm = nn.LayerNorm(N_FEATURES)
        self.body = nn.Sequential(
            nn.Linear(N_FEATURES, hidden), nn.GELU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden), nn.GELU(), nn.Dropout(0.1),
        )
        self.head = nn.Linear(hidden, N_CLASSES)

    def forward(self, x):
        return self.head(self.body(self.norm(x)))


def train_step(model, data):
    x, y, epoch, b = data.next_batch()
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.05)
    acc = (logits.argmax(-1) == y).float().mean()
    return loss, acc, epoch, b


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    logits = model(x)
    model.train()
    return F.cross_entropy(logits, y).item(), (logits.argmax(-1) == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    x, y = make_data(6400, g)
    x_tr, y_tr, x_va, y_va = x[:5120], y[:5120], x[5120:], y[5120:]
    data = ResidentDataset(x_tr, y_tr, args.batch_size, args.epochs, seed=0)

    model = SegmentNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    step_fn = train_step if args.no_compile else torch.compile(train_step)

    print(f"mode={'eager' if args.no_compile else 'compiled'} train={len(x_tr)} val={len(x_va)} "
          f"batches/epoch={data.num_batches}")
    t0 = time.time()
    for epoch in range(args.epochs):
        tot_loss = tot_acc = 0.0
        for _ in range(data.num_batches):
            loss, acc, ep, b = step_fn(model, data)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot_loss += loss.item()
            tot_acc += acc.item()
        vl, va = evaluate(model, x_va, y_va)
        print(f"epoch {epoch}: train loss {tot_loss / data.num_batches:.4f} acc {tot_acc / data.num_batches:.3f} | "
              f"val loss {vl:.4f} acc {va:.3f} ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
