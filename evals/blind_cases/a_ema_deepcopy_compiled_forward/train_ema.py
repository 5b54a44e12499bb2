"""Train a small ConvNet classifier with EMA weights and report live vs EMA validation metrics."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from ema import ModelEma

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("train")


class ConvNet(nn.Module):
    def __init__(self, num_classes=10, width=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.GroupNorm(8, width), nn.GELU(),
            nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.GroupNorm(8, 2 * width), nn.GELU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(2 * width, num_classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--ema-decay", type=float, default=0.99)
    p.add_argument("--ema-warmup", type=int, default=0)
    p.add_argument("--num-classes", type=int, default=10)
    p.add_argument("--compile", action="store_true", default=True)
    p.add_argument("--no-compile", dest="compile", action="store_false")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def make_dataset(n, num_classes, generator):
    # class-conditional colour blobs: learnable, but not instantly
    y = torch.randint(0, num_classes, (n,), generator=generator)
    protos = torch.randn(num_classes, 3, 1, 1, generator=torch.Generator().manual_seed(123))
    x = protos[y] + 1.5 * torch.randn(n, 3, 16, 16, generator=generator)
    return x, y


@torch.no_grad()
def evaluate(model, x, y, batch_size=128):
    was_training = model.training
    model.eval()
    loss_sum, correct = 0.0, 0
    for i in range(0, x.shape[0], batch_size):
        logits = model(x[i:i + batch_size])
        loss_sum += F.cross_entropy(logits, y[i:i + batch_size], reduction="sum").item()
        correct += (logits.argmax(-1) == y[i:i + batch_size]).sum().item()
    model.train(was_training)
    return loss_sum / x.shape[0], correct / x.shape[0]


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    n_train = args.steps_per_epoch * args.batch_size
    x_train, y_train = make_dataset(n_train, args.num_classes, gen)
    x_val, y_val = make_dataset(1024, args.num_classes, gen)

    model = ConvNet(args.num_classes)
    if args.compile:
        # compile the forward in place so state_dict keys / checkpoints stay unchanged
        model.forward = torch.compile(model.forward)
    ema = ModelEma(model, decay=args.ema_decay, warmup_steps=args.ema_warmup)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=5e-4)

    t0 = time.perf_counter()
    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = torch.randperm(n_train, generator=gen)
        running = 0.0
        for i in range(args.steps_per_epoch):
            idx = perm[i * args.batch_size:(i + 1) * args.batch_size]
            logits = model(x_train[idx])
            loss = F.cross_entropy(logits, y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            ema.update(model)
            running += loss.item()
            step += 1
        live_loss, live_acc = evaluate(model, x_val, y_val)
        ema_loss, ema_acc = evaluate(ema, x_val, y_val)
        log.info(
            "epoch %d step %d train_loss %.4f | val live loss %.4f acc %.3f | val ema loss %.4f acc %.3f | %.1fs",
            epoch, step, running / args.steps_per_epoch, live_loss, live_acc, ema_loss, ema_acc,
            time.perf_counter() - t0,
        )
    drift = sum((a - b).abs().sum().item() for a, b in zip(model.state_dict().values(), ema.module.state_dict().values())
                if a.dtype.is_floating_point)
    log.info("total |live - ema| weight difference: %.3f", drift)


if __name__ == "__main__":
    main()
