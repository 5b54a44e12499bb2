import argparse
import math
import time

import torch

from flows import Glow

N_BITS = 5
N_BINS = 2 ** N_BITS
SHAPE = (1, 8, 8)


def make_strokes(n, generator):
    """Small synthetic 'glyph' images: one or two thick strokes with random position/orientation."""
    ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
    imgs = torch.zeros(n, 1, 8, 8)
    for i in range(n):
        for _ in range(int(torch.randint(1, 3, (1,), generator=generator))):
            theta = torch.rand(1, generator=generator) * math.pi
            cx, cy = torch.rand(2, generator=generator) * 4 + 2
            d = (xs - cx) * torch.sin(theta) - (ys - cy) * torch.cos(theta)
            imgs[i, 0] += torch.exp(-(d ** 2) / 1.5)
    imgs = imgs.clamp(0, 1)
    return torch.floor(imgs * (N_BINS - 1) + 0.5)  # integer levels 0 .. N_BINS-1


def preprocess(levels, generator=None):
    noise = torch.rand(levels.shape, generator=generator)
    return (levels + noise) / N_BINS - 0.5


def bits_per_dim(log_px):
    d = SHAPE[0] * SHAPE[1] * SHAPE[2]
    return (-(log_px - d * math.log(N_BINS)) / (d * math.log(2))).mean()


def evaluate(model, levels, batch_size):
    model.eval()
    g = torch.Generator().manual_seed(123)
    total = 0.0
    with torch.no_grad():
        for i in range(0, len(levels), batch_size):
            x = preprocess(levels[i : i + batch_size], g)
            _, log_px = model(x)
            total += bits_per_dim(log_px).item() * len(x)
    model.train()
    return total / len(levels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    train_levels = make_strokes(1536, gen)
    val_levels = make_strokes(512, gen)

    model = Glow(in_channels=SHAPE[0], n_steps=3, hidden=32)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    net = model if args.no_compile else torch.compile(model)

    steps_per_epoch = len(train_levels) // args.batch_size
    print(f"mode={'eager' if args.no_compile else 'compiled'} params={sum(p.numel() for p in model.parameters())} "
          f"steps/epoch={steps_per_epoch}")
    for epoch in range(args.epochs):
        t0 = time.time()
        perm = torch.randperm(len(train_levels), generator=gen)
        running = 0.0
        for step in range(steps_per_epoch):
            idx = perm[step * args.batch_size : (step + 1) * args.batch_size]
            x = preprocess(train_levels[idx], gen)
            _, log_px = net(x)
            loss = bits_per_dim(log_px)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 50.0)
            opt.step()
            running += loss.item()
        val = evaluate(net, val_levels, 256)
        print(f"epoch {epoch}: train bpd {running / steps_per_epoch:.4f}  val bpd {val:.4f}  ({time.time() - t0:.1f}s)")

    an = model.steps[0].actnorm
    print(f"step0 actnorm logs[:4] = {[round(v, 4) for v in an.logs.flatten()[:4].tolist()]}")
    samples = model.sample(16, SHAPE)
    print(f"sample stats: mean {samples.mean().item():.3f} std {samples.std().item():.3f}")


if __name__ == "__main__":
    main()
