"""Train the defect classifier, evaluate it, and export it with torch.export
for the C++/AOTInductor serving side. After export we run the exported
program on the validation set as a smoke test."""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from torch.export import Dim

from model import DefectClassifier

log = logging.getLogger("defects")


def make_split(n, num_classes, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, num_classes, (n,), generator=g)
    imgs = torch.randn(n, 1, 32, 32, generator=g) * 0.5
    # each class gets a bright horizontal band at a class-specific row
    for c in range(num_classes):
        rows = slice(2 + 5 * c, 5 + 5 * c)
        imgs[labels == c, :, rows, :] += 1.5
    imgs = imgs * 40.0 + 110.0  # raw grey levels from the line camera
    return imgs, labels


def normalize(x):
    return (x - 110.0) / 40.0


@torch.no_grad()
def evaluate(fn, imgs, labels, batch_size):
    correct = 0
    for i in range(0, len(imgs), batch_size):
        logits = fn(normalize(imgs[i : i + batch_size]))
        correct += (logits.argmax(-1) == labels[i : i + batch_size]).sum().item()
    return correct / len(imgs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--num-classes", type=int, default=6)
    ap.add_argument("--out", default="defect_classifier.pt2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    train_x, train_y = make_split(3072, args.num_classes, args.seed)
    val_x, val_y = make_split(512, args.num_classes, args.seed + 1)
    model = DefectClassifier(num_classes=args.num_classes)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=args.epochs * (len(train_x) // args.batch_size)
    )

    for epoch in range(args.epochs):
        model.train()
        t0 = time.perf_counter()
        perm = torch.randperm(len(train_x))
        running = 0.0
        for i in range(0, len(train_x) - args.batch_size + 1, args.batch_size):
            idx = perm[i : i + args.batch_size]
            loss = F.cross_entropy(model(normalize(train_x[idx])), train_y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            running += loss.item()
        model.eval()
        acc = evaluate(model, val_x, val_y, 256)
        log.info("epoch %d  loss %.4f  val_acc %.3f  (%.1fs)", epoch, running / (len(train_x) // args.batch_size),
                 acc, time.perf_counter() - t0)
        model.train()

    # ---- export for serving ----
    example = normalize(val_x[:8])
    batch = Dim("batch", min=1, max=256)
    ep = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
    torch.export.save(ep, args.out)
    log.info("saved exported program to %s", args.out)

    # ---- smoke test: exported program vs eager on the validation set ----
    served = torch.export.load(args.out).module()
    model.eval()
    eager_acc = evaluate(model, val_x, val_y, 256)
    served_acc = evaluate(served, val_x, val_y, 256)
    single = torch.stack([served(normalize(val_x[i : i + 1]))[0] for i in range(16)])
    batched = served(normalize(val_x[:16]))
    log.info("eager val_acc %.3f | exported val_acc %.3f", eager_acc, served_acc)
    log.info("exported: max |single-item logits - batched logits| = %.4f", (single - batched).abs().max().item())
    with torch.no_grad():
        ref = model(normalize(val_x[:16]))
    diff = (batched - ref).abs().max().item()
    log.info("exported vs eager max abs diff on 16 samples: %.4f", diff)
    if diff > 1e-3:
        raise SystemExit("exported program does not match the eager model")


if __name__ == "__main__":
    main()
