"""Noisy-label image classification with small-loss sample selection.

Each mini-batch is split into a "clean" part (the samples with the smallest
per-sample loss) and an "unclean" part; only the clean part is used for the
update.  The selection ratio follows the estimated noise rate of the dataset.
"""
import argparse
import math
import operator
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--num-train", type=int, default=1280)
    p.add_argument("--num-classes", type=int, default=10)
    p.add_argument("--noise-rate", type=float, default=0.2)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class NoisyCIFARLike(torch.utils.data.Dataset):
    """Synthetic 3x32x32 images with class-dependent blobs and symmetric label noise."""

    def __init__(self, n, num_classes, noise_rate, seed):
        g = torch.Generator().manual_seed(seed)
        self.clean = torch.randint(0, num_classes, (n,), generator=g)
        protos = torch.randn(num_classes, 3, 8, 8, generator=g)
        imgs = F.interpolate(protos[self.clean], size=32, mode="bilinear", align_corners=False)
        self.images = imgs + 0.8 * torch.randn(n, 3, 32, 32, generator=g)
        flip = torch.rand(n, generator=g) < noise_rate
        noisy = torch.randint(0, num_classes, (n,), generator=g)
        self.labels = torch.where(flip, noisy, self.clean)
        self.is_noisy = self.labels != self.clean

    def __len__(self):
        return self.labels.numel()

    def __getitem__(self, i):
        return i, self.images[i], self.labels[i]


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = F.leaky_relu(self.bn1(self.conv1(x)), 0.01)
        x = F.leaky_relu(self.bn2(self.conv2(x)), 0.01)
        return F.max_pool2d(x, 2)


class SmallCNN(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.features = nn.Sequential(ConvBlock(3, 32), ConvBlock(32, 64), ConvBlock(64, 96))
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(96, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = x.mean(dim=(2, 3))
        return self.fc(self.dropout(x))


class SmallLossSelector:
    """Keeps the (1 - noise_rate) fraction of a batch with the lowest loss."""

    def __init__(self, noise_rate):
        self.noise_rate = noise_rate

    def separate(self, ids, per_sample_loss):
        num_clean = int(math.ceil(len(ids) * (1.0 - self.noise_rate)))
        loss_map = {}
        for i in range(len(ids)):
            loss_map[i] = per_sample_loss[i]
        loss_map = dict(sorted(loss_map.items(), key=operator.itemgetter(1)))
        order = list(loss_map.keys())
        clean_pos = order[:num_clean]
        unclean_pos = order[num_clean:]
        return clean_pos, unclean_pos


def make_loss_fn(model, selector):
    def forward_and_select(ids, images, labels):
        logits = model(images)
        per_sample = F.cross_entropy(logits, labels, reduction="none")
        clean_pos, unclean_pos = selector.separate(ids, per_sample)
        clean_loss = torch.stack([per_sample[p] for p in clean_pos]).mean()
        clean_ids = torch.stack([ids[p] for p in clean_pos])
        unclean_ids = torch.stack([ids[p] for p in unclean_pos])
        acc = (logits.argmax(-1) == labels).float().mean()
        return clean_loss, clean_ids, unclean_ids, acc

    return forward_and_select


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    ds = NoisyCIFARLike(args.num_train, args.num_classes, args.noise_rate, args.seed)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = SmallCNN(args.num_classes)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    selector = SmallLossSelector(args.noise_rate)

    step_fn = make_loss_fn(model, selector)
    if args.compile:
        step_fn = torch.compile(step_fn, fullgraph=True)

    print(f"torch {torch.__version__}  compile={args.compile}  "
          f"noisy labels in train set: {ds.is_noisy.float().mean().item():.3f}")
    step = 0
    for epoch in range(args.epochs):
        model.train()
        t_epoch = time.perf_counter()
        picked_noisy, picked_total = 0, 0
        for ids, images, labels in loader:
            t0 = time.perf_counter()
            clean_loss, clean_ids, unclean_ids, acc = step_fn(ids, images, labels)
            opt.zero_grad(set_to_none=True)
            clean_loss.backward()
            opt.step()
            dt = time.perf_counter() - t0
            picked_noisy += int(ds.is_noisy[clean_ids].sum())
            picked_total += clean_ids.numel()
            if step % 10 == 0:
                print(f"epoch {epoch} step {step:3d} loss {clean_loss.item():.4f} "
                      f"acc {acc.item():.3f} step_time {dt * 1000:.1f} ms")
            step += 1
        frac = picked_noisy / max(picked_total, 1)
        print(f"epoch {epoch} done in {time.perf_counter() - t_epoch:.1f}s; "
              f"noisy fraction among selected samples: {frac:.3f}")


if __name__ == "__main__":
    main()
