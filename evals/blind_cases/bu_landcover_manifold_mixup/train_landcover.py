"""Land-cover classifier for multispectral pixel time series.

Each sample is one pixel observed on T acquisition dates with C spectral bands.
A small temporal conv encoder produces an embedding, and during training we use
manifold mixup on the embedding (a fraction of the batch is mixed with partner
rows, labels are mixed with the same weights).

    python train_landcover.py --epochs 3            # eager
    python train_landcover.py --epochs 3 --compile  # torch.compile
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("landcover")

CLASSES = ["water", "forest", "cropland", "grassland", "urban", "bare", "wetland", "snow"]


def make_synthetic_tiles(n, dates, bands, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_classes, (n,), generator=g)
    t = torch.linspace(0, 1, dates)
    phase = torch.rand(n_classes, bands, generator=g) * 6.28
    amp = torch.rand(n_classes, bands, generator=g)
    base = torch.rand(n_classes, bands, generator=g)
    season = torch.sin(6.28 * t[None, None, :] + phase[y][:, :, None]) * amp[y][:, :, None]
    x = base[y][:, :, None] + 0.5 * season + 0.15 * torch.randn(n, bands, dates, generator=g)
    return x.float(), y


class EmbeddingStats(nn.Module):
    """Keeps the latest embedding spread so the trainer can warn about collapse."""

    def __init__(self):
        super().__init__()
        self.last_spread = None

    def forward(self, h):
        self.last_spread = h.std(dim=0).mean()
        return h


class ManifoldMixup(nn.Module):
    def __init__(self, frac=0.5, alpha=0.4):
        super().__init__()
        self.frac = frac
        self.register_buffer("alpha", torch.tensor(alpha))

    def forward(self, h, y_soft):
        b = h.shape[0]
        n_mix = int(b * self.frac)
        rows = torch.randperm(b, device=h.device)[:n_mix]
        partners = torch.randperm(b, device=h.device)[:n_mix]
        lam = torch.distributions.Beta(self.alpha, self.alpha).sample((n_mix, 1))
        mixed_h = lam * h[rows] + (1 - lam) * h[partners]
        mixed_y = lam * y_soft[rows] + (1 - lam) * y_soft[partners]
        h[rows] = mixed_h
        y_soft = y_soft.clone()
        y_soft[rows] = mixed_y
        return h, y_soft


class TemporalEncoder(nn.Module):
    def __init__(self, bands, width, emb_dim, n_classes, mix_frac):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(bands, width, 5, padding=2), nn.BatchNorm1d(width), nn.GELU(),
            nn.Conv1d(width, width, 5, padding=2), nn.BatchNorm1d(width), nn.GELU(),
            nn.Conv1d(width, width, 3, padding=1), nn.BatchNorm1d(width), nn.GELU(),
        )
        self.proj = nn.Linear(2 * width, emb_dim)
        self.stats = EmbeddingStats()
        self.mixup = ManifoldMixup(frac=mix_frac)
        self.head = nn.Sequential(nn.LayerNorm(emb_dim), nn.Linear(emb_dim, n_classes))

    def forward(self, x, y_soft=None):
        f = self.conv(x)
        f = torch.cat([f.mean(-1), f.amax(-1)], dim=1)
        h = self.proj(f)
        h = self.stats(h)
        if self.training and y_soft is not None:
            h, y_soft = self.mixup(h, y_soft)
        return self.head(h), y_soft


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            logits, _ = model(x)
            correct += (logits.argmax(-1) == y).sum().item()
            total += y.numel()
    model.train()
    return correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--dates", type=int, default=24)
    p.add_argument("--bands", type=int, default=10)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--emb-dim", type=int, default=128)
    p.add_argument("--mix-frac", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    n_classes = len(CLASSES)
    xtr, ytr = make_synthetic_tiles(2048, args.dates, args.bands, n_classes, seed=1)
    xva, yva = make_synthetic_tiles(512, args.dates, args.bands, n_classes, seed=2)
    train_dl = DataLoader(TensorDataset(xtr, ytr), batch_size=args.batch_size, shuffle=True, drop_last=True)
    val_dl = DataLoader(TensorDataset(xva, yva), batch_size=256)

    model = TemporalEncoder(args.bands, args.width, args.emb_dim, n_classes, args.mix_frac)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    step_model = torch.compile(model) if args.compile else model
    log.info("params=%d compile=%s", sum(p.numel() for p in model.parameters()), args.compile)

    step = 0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        running = 0.0
        for x, y in train_dl:
            y_soft = F.one_hot(y, n_classes).float()
            logits, target = step_model(x, y_soft)
            loss = torch.sum(-target * F.log_softmax(logits, -1), dim=-1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item()
            step += 1
            if step % 10 == 0:
                spread = model.stats.last_spread.item()
                if spread < 1e-3:
                    log.warning("embedding spread %.2e: possible collapse", spread)
                log.info("epoch %d step %d loss %.4f emb_spread %.3f", epoch, step, loss.item(), spread)
        acc = evaluate(step_model, val_dl)
        log.info("epoch %d done in %.1fs  train_loss %.4f  val_acc %.3f",
                 epoch, time.perf_counter() - t0, running / len(train_dl), acc)


if __name__ == "__main__":
    main()
