"""A/B: does torch.compile change training of the leaf-disease classifier?

Trains the same initial weights on the same batch order twice (eager, then compiled) and compares the
per-step training losses.

  python train_ab.py [--steps 40] [--batch 64] [--backend inductor] [--lr 0.05]
"""
import argparse
import copy
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

log = logging.getLogger("leaf_ab")
N_CLASSES = 5


def synth_leaf_dataset(n, seed):
    """Synthetic 3x32x32 'leaf patches': each disease class has its own lesion colour and texture."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, N_CLASSES, (n,), generator=g)
    base = torch.tensor([0.20, 0.55, 0.18]).view(1, 3, 1, 1)
    x = base + 0.05 * torch.randn(n, 3, 32, 32, generator=g)
    lesion_rgb = torch.tensor([[0.0, 0.0, 0.0], [0.5, 0.1, -0.3], [0.3, 0.3, -0.1], [-0.1, -0.3, -0.1], [0.4, -0.2, 0.3]])
    yy, xx = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    for i in range(n):
        c = int(y[i])
        if c == 0:
            continue
        cy, cx = torch.randint(6, 26, (2,), generator=g).tolist()
        r = 3.0 + c
        mask = (((yy - cy) ** 2 + (xx - cx) ** 2) < r * r).float()
        if c >= 3:
            mask = mask * (0.5 + 0.5 * torch.sin(xx * (c - 1.5)))
        x[i] += lesion_rgb[c].view(3, 1, 1) * mask
    return x, y


class LeafNet(nn.Module):
    def __init__(self, width=16, n_classes=N_CLASSES):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

        self.features = nn.Sequential(
            block(3, width), block(width, width), nn.MaxPool2d(2),
            block(width, 2 * width), block(2 * width, 2 * width), nn.MaxPool2d(2),
            block(2 * width, 4 * width), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.0), nn.Linear(4 * width, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def warm_up(model, batch_shape, n_classes):
    """Trigger compilation of forward+backward up front so that step timings are not polluted by it."""
    x = torch.randn(*batch_shape)
    y = torch.randint(0, n_classes, (batch_shape[0],))
    t0 = time.perf_counter()
    F.cross_entropy(model(x), y).backward()
    log.info("warm-up (compile) took %.1fs", time.perf_counter() - t0)


def train_arm(name, init_state, args, train_ds, compiled):
    torch.manual_seed(args.seed)
    model = LeafNet()
    model.load_state_dict(init_state)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    step_fn = model
    if compiled:
        step_fn = torch.compile(model, backend=args.backend)
        warm_up(step_fn, (args.batch, 3, 32, 32), N_CLASSES)

    loader = DataLoader(train_ds, batch_size=args.batch, shuffle=True, drop_last=True,
                        generator=torch.Generator().manual_seed(args.seed))
    losses, t_steps = [], []
    step = 0
    while step < args.steps:
        for x, y in loader:
            t0 = time.perf_counter()
            loss = F.cross_entropy(step_fn(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t_steps.append(time.perf_counter() - t0)
            losses.append(loss.item())
            if step % 10 == 0:
                log.info("[%s] step %3d loss %.4f", name, step, losses[-1])
            step += 1
            if step >= args.steps:
                break
    tail = sum(losses[-10:]) / len(losses[-10:])
    med = sorted(t_steps)[len(t_steps) // 2]
    log.info("[%s] final loss %.4f  mean of last 10 %.4f  median step %.1f ms", name, losses[-1], tail, med * 1e3)
    return losses, tail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log.info("torch %s", torch.__version__)

    xtr, ytr = synth_leaf_dataset(1024, seed=1)
    train_ds = TensorDataset(xtr, ytr)

    torch.manual_seed(args.seed)
    init_state = copy.deepcopy(LeafNet().state_dict())

    eager_losses, eager_tail = train_arm("eager", init_state, args, train_ds, compiled=False)
    comp_losses, comp_tail = train_arm("compiled", init_state, args, train_ds, compiled=True)

    diffs = [abs(a - b) for a, b in zip(eager_losses, comp_losses)]
    first_bad = next((i for i, d in enumerate(diffs) if d > 1e-4), None)
    log.info("loss |diff|: step0 %.2e  step1 %.2e  max %.2e  first step > 1e-4: %s",
             diffs[0], diffs[1], max(diffs), first_bad)
    log.info("mean loss over last 10 steps: eager %.4f vs compiled %.4f", eager_tail, comp_tail)
    if first_bad is not None:
        log.warning("A/B MISMATCH: compiled training diverges from eager")


if __name__ == "__main__":
    main()
