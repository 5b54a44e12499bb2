"""Bird-call classifier on log-mel patches: mixup + label smoothing, compiled train step.

Usage: python train_birdcall.py --steps 30 --compile fullgraph
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from losses import SoftTargetCrossEntropy

log = logging.getLogger("birdcall")

N_MELS, N_FRAMES, N_CLASSES = 48, 64, 12


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        return F.avg_pool2d(x, 2)


class BirdCallNet(nn.Module):
    def __init__(self, n_classes=N_CLASSES, width=16):
        super().__init__()
        self.spec_bn = nn.BatchNorm2d(1)
        self.blocks = nn.Sequential(
            ConvBlock(1, width), ConvBlock(width, width * 2), ConvBlock(width * 2, width * 4)
        )
        self.dropout = nn.Dropout(0.2)
        self.head = nn.Linear(width * 4, n_classes)

    def forward(self, mel):
        x = self.spec_bn(mel.unsqueeze(1))
        x = self.blocks(x)
        x = x.mean(dim=3)                      # pool over time
        x = x.amax(dim=2)                      # max over frequency
        return self.head(self.dropout(x))


def make_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(n) % N_CLASSES
    labels = labels[torch.randperm(n, generator=g)]
    mel = torch.randn(n, N_MELS, N_FRAMES, generator=g) * 0.5
    # a class-dependent tonal band so the task is learnable
    for c in range(N_CLASSES):
        idx = labels == c
        mel[idx, 4 * c:4 * c + 4, :] += 2.0
    return mel, labels


def batches(mel, labels, bs, g):
    order = torch.randperm(len(labels), generator=g)
    for i in range(0, len(order) - bs + 1, bs):
        j = order[i:i + bs]
        yield mel[j], labels[j]


def train_step(model, criterion, opt, mel, y, perm, lam):
    mixed = lam * mel + (1.0 - lam) * mel[perm]
    logits = model(mixed)
    loss = criterion(logits, y, perm, lam)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    return loss.detach()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--mixup-alpha", type=float, default=0.4)
    ap.add_argument("--compile", choices=["none", "default", "fullgraph"], default="fullgraph")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(0)
    mel, labels = make_dataset(1440, seed=1)
    model = BirdCallNet()
    criterion = SoftTargetCrossEntropy(smoothing=0.1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    beta = torch.distributions.Beta(args.mixup_alpha, args.mixup_alpha)

    step_fn = train_step
    if args.compile != "none":
        step_fn = torch.compile(train_step, fullgraph=(args.compile == "fullgraph"))
    log.info("torch %s, compile=%s", torch.__version__, args.compile)

    g = torch.Generator().manual_seed(2)
    step, t_first, t0 = 0, None, time.perf_counter()
    model.train()
    while step < args.steps:
        for xb, yb in batches(mel, labels, args.batch_size, g):
            perm = torch.randperm(xb.shape[0], generator=g)
            lam = beta.sample()
            ts = time.perf_counter()
            loss = step_fn(model, criterion, opt, xb, yb, perm, lam)
            opt.step()
            if t_first is None:
                t_first = time.perf_counter() - ts
                log.info("first step (incl. compile) %.1fs", t_first)
            step += 1
            if step % 10 == 0:
                log.info("step %d loss %.4f", step, loss.item())
            if step >= args.steps:
                break
    steady = (time.perf_counter() - t0 - t_first) / max(1, args.steps - 1)
    log.info("done: %d steps, %.1f ms/step after the first", args.steps, steady * 1e3)


if __name__ == "__main__":
    main()
