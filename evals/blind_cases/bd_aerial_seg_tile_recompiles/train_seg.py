"""Building-footprint segmentation on aerial tiles of mixed sizes.

Tiles come from several survey campaigns, each with its own crop size, so the
loader buckets tiles by size and every batch has one (H, W).
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("seg")

TILE_SIZES = [(64, 64), (64, 96), (96, 64), (96, 96), (80, 112), (112, 80)]


class CoordConv(nn.Module):
    """Conv that sees normalised (y, x) coordinates as two extra channels."""

    def __init__(self, cin, cout, k=3):
        super().__init__()
        self.conv = nn.Conv2d(cin + 2, cout, k, padding=k // 2)

    def forward(self, x):
        b, _, h, w = x.shape
        ys = torch.linspace(-1.0, 1.0, steps=h, device=x.device, dtype=x.dtype)
        xs = torch.linspace(-1.0, 1.0, steps=w, device=x.device, dtype=x.dtype)
        yy, xx = torch.meshgrid(ys, xs, indexing="ij")
        coords = torch.stack([yy, xx]).unsqueeze(0).expand(b, -1, -1, -1)
        return self.conv(torch.cat([x, coords], dim=1))


class Block(nn.Module):
    def __init__(self, cin, cout, coord=False):
        super().__init__()
        self.c1 = CoordConv(cin, cout) if coord else nn.Conv2d(cin, cout, 3, padding=1)
        self.n1 = nn.GroupNorm(4, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.n2 = nn.GroupNorm(4, cout)

    def forward(self, x):
        x = F.silu(self.n1(self.c1(x)))
        return F.silu(self.n2(self.c2(x)))


class FootprintNet(nn.Module):
    def __init__(self, width=16, n_classes=2):
        super().__init__()
        self.enc1 = Block(3, width, coord=True)
        self.enc2 = Block(width, width * 2)
        self.mid = Block(width * 2, width * 2, coord=True)
        self.dec = Block(width * 3, width)
        self.head = nn.Conv2d(width, n_classes, 1)

    def forward(self, img):
        e1 = self.enc1(img)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(e2)
        up = F.interpolate(m, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(self.dec(torch.cat([up, e1], dim=1)))


def make_batches(n_batches, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for i in range(n_batches):
        h, w = TILE_SIZES[i % len(TILE_SIZES)]
        img = torch.rand(batch_size, 3, h, w, generator=g)
        # synthetic "buildings": bright rectangles
        mask = (F.avg_pool2d(img.mean(1, keepdim=True), 9, 1, 4) > 0.5).long().squeeze(1)
        batches.append((img, mask))
    return batches


def dice_loss(logits, target, eps=1.0):
    prob = logits.softmax(1)[:, 1]
    t = target.float()
    inter = (prob * t).sum((1, 2))
    return 1 - ((2 * inter + eps) / (prob.sum((1, 2)) + t.sum((1, 2)) + eps)).mean()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batches", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = FootprintNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    fwd = model if args.no_compile else torch.compile(model, dynamic=True)
    batches = make_batches(args.batches, args.batch_size, args.seed)
    log.info("tile sizes in this run: %s", sorted({tuple(b[0].shape[-2:]) for b in batches}))

    for epoch in range(args.epochs):
        model.train()
        t0 = time.perf_counter()
        tot = 0.0
        for step, (img, mask) in enumerate(batches):
            ts = time.perf_counter()
            logits = fwd(img)
            loss = F.cross_entropy(logits, mask) + dice_loss(logits, mask)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item()
            if epoch == 0:
                log.info("epoch %d step %2d tile %s loss %.4f  %.2fs", epoch, step,
                         tuple(img.shape[-2:]), loss.item(), time.perf_counter() - ts)
        log.info("epoch %d mean loss %.4f  time %.1fs", epoch, tot / len(batches),
                 time.perf_counter() - t0)


if __name__ == "__main__":
    main()
