import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from inplace_ops import inplace_leaky_relu

log = logging.getLogger("tiles")


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, slope):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.slope = slope

    def forward(self, x):
        return inplace_leaky_relu(self.bn(self.conv(x)), self.slope)


class TileNet(nn.Module):
    def __init__(self, num_classes=6, width=32, slope=0.01):
        super().__init__()
        self.stem = ConvBlock(3, width, slope)
        self.stages = nn.Sequential(
            ConvBlock(width, width, slope), nn.MaxPool2d(2),
            ConvBlock(width, 2 * width, slope), ConvBlock(2 * width, 2 * width, slope), nn.MaxPool2d(2),
            ConvBlock(2 * width, 4 * width, slope), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(4 * width, num_classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.head(x.mean(dim=(2, 3)))


def make_batches(n_batches, batch_size, size, num_classes, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(num_classes, 3, size, size, generator=g)
    for _ in range(n_batches):
        y = torch.randint(0, num_classes, (batch_size,), generator=g)
        x = protos[y] + 0.8 * torch.randn(batch_size, 3, size, size, generator=g)
        yield x, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = TileNet()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    step_fn = model
    if args.compile:
        step_fn = torch.compile(model)
    log.info("torch %s, compile=%s, params=%d", torch.__version__, args.compile,
             sum(p.numel() for p in model.parameters()))

    model.train()
    t0 = time.time()
    for step, (x, y) in enumerate(make_batches(args.steps, args.batch_size, args.size, 6, args.seed)):
        logits = step_fn(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 5 == 0 or step == args.steps - 1:
            acc = (logits.argmax(1) == y).float().mean().item()
            log.info("step %3d loss %.4f acc %.3f (%.1fs)", step, loss.item(), acc, time.time() - t0)
    log.info("done in %.1fs", time.time() - t0)


if __name__ == "__main__":
    main()
