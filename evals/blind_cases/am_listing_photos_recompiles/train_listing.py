"""Marketplace listing categorizer.

Each listing has between 1 and 12 seller photos. Photos were embedded offline by the
image backbone (512-d features); this model fuses the photos of a listing and predicts
the listing's category.
"""
import argparse
import logging
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("listing")

FEAT_DIM = 512
MAX_PHOTOS = 12
NUM_CLASSES = 40


class PhotoFusion(nn.Module):
    def __init__(self, d_model=256, n_heads=4, n_classes=NUM_CLASSES):
        super().__init__()
        self.proj = nn.Sequential(nn.LayerNorm(FEAT_DIM), nn.Linear(FEAT_DIM, d_model), nn.GELU())
        self.slot = nn.Parameter(torch.zeros(MAX_PHOTOS, d_model))
        self.query = nn.Parameter(torch.randn(1, 1, d_model) * 0.02)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ffn = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, photos):
        # photos: one [B, FEAT_DIM] tensor per photo position (cover photo first)
        tokens = [self.proj(p) + self.slot[i] for i, p in enumerate(photos)]
        tokens = torch.stack(tokens, dim=1)                      # [B, P, d]
        q = self.query.expand(tokens.size(0), -1, -1)
        pooled, _ = self.attn(q, tokens, tokens, need_weights=False)
        pooled = pooled.squeeze(1)
        pooled = pooled + self.ffn(pooled)
        return self.head(pooled)


def make_listings(n, seed):
    """Synthetic stand-in for the feature store export: (photo features, label)."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(NUM_CLASSES, FEAT_DIM, generator=g)
    listings = []
    for _ in range(n):
        y = int(torch.randint(0, NUM_CLASSES, (1,), generator=g))
        k = int(torch.randint(1, MAX_PHOTOS + 1, (1,), generator=g))
        feats = centers[y] + 1.5 * torch.randn(k, FEAT_DIM, generator=g)
        listings.append((feats, y))
    return listings


def batches_by_photo_count(listings, batch_size, rng):
    """Group listings with the same number of photos so no padding is needed."""
    buckets = {}
    for feats, y in listings:
        buckets.setdefault(feats.size(0), []).append((feats, y))
    batches = []
    for k, items in buckets.items():
        rng.shuffle(items)
        for i in range(0, len(items) - batch_size + 1, batch_size):
            chunk = items[i:i + batch_size]
            photos = [torch.stack([f[j] for f, _ in chunk]) for j in range(k)]
            labels = torch.tensor([y for _, y in chunk])
            batches.append((photos, labels))
    rng.shuffle(batches)
    return batches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listings", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--dynamic", action="store_true", help="torch.compile(dynamic=True)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    rng = random.Random(0)
    listings = make_listings(args.listings, seed=1)
    model = PhotoFusion()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_fn = model
    if not args.no_compile:
        step_fn = torch.compile(model, dynamic=True if args.dynamic else None)

    step = 0
    for epoch in range(args.epochs):
        batches = batches_by_photo_count(listings, args.batch_size, rng)
        t0 = time.perf_counter()
        tot, correct, seen = 0.0, 0, 0
        for photos, labels in batches:
            ts = time.perf_counter()
            logits = step_fn(photos)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            dt = time.perf_counter() - ts
            if dt > 2.0:
                log.info("step %d slow: %.1fs (batch with %d photos)", step, dt, len(photos))
            tot += loss.item() * labels.numel()
            correct += (logits.argmax(-1) == labels).sum().item()
            seen += labels.numel()
            step += 1
        log.info("epoch %d: %d steps, loss %.4f, acc %.3f, %.1fs", epoch, len(batches),
                 tot / seen, correct / seen, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
