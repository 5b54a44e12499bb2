"""Distil a wide MLP teacher into a small student on a synthetic 20-class task.

    python distill.py                 # eager
    python distill.py --compile       # torch.compile the train step
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn

import losses

log = logging.getLogger("distill")


def make_data(n, dim, classes, seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=g) * 2.0
    labels = torch.randint(0, classes, (n,), generator=g)
    x = centers[labels] + torch.randn(n, dim, generator=g) * 4.0
    return x, labels


def mlp(dim, hidden, classes, depth):
    layers, d = [], dim
    for _ in range(depth):
        layers += [nn.Linear(d, hidden), nn.LayerNorm(hidden), nn.GELU()]
        d = hidden
    layers.append(nn.Linear(d, classes))
    return nn.Sequential(*layers)


def pretrain_teacher(teacher, x, y, steps, bs):
    opt = torch.optim.AdamW(teacher.parameters(), lr=2e-3)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        idx = torch.randint(0, x.shape[0], (bs,), generator=g)
        loss = nn.functional.cross_entropy(teacher(x[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    teacher.eval().requires_grad_(False)


def temperature_for_epoch(epoch, epochs, t_start, t_end):
    if epochs <= 1:
        return t_end
    frac = epoch / (epochs - 1)
    # cosine anneal from t_start to t_end
    return t_end + 0.5 * (t_start - t_end) * (1 + math.cos(math.pi * frac))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--steps-per-epoch", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--t-start", type=float, default=4.0)
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.manual_seed(args.seed)

    dim, classes = 64, 20
    x_all, y_all = make_data(8192 + 2048, dim, classes, seed=10)
    x_train, y_train = x_all[:8192], y_all[:8192]
    x_val, y_val = x_all[8192:], y_all[8192:]

    teacher = mlp(dim, 512, classes, depth=3)
    pretrain_teacher(teacher, x_train, y_train, steps=150, bs=256)
    with torch.no_grad():
        t_acc = (teacher(x_val).argmax(-1) == y_val).float().mean().item()
    log.info("teacher val acc %.4f", t_acc)

    torch.manual_seed(args.seed + 100)
    student = mlp(dim, 96, classes, depth=2)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.01)

    def train_step(xb, yb):
        with torch.no_grad():
            t_logits = teacher(xb)
        s_logits = student(xb)
        loss, ce, kd = losses.distillation_loss(s_logits, t_logits, yb)
        loss.backward()
        return loss.detach(), ce, kd

    step_fn = torch.compile(train_step) if args.compile else train_step

    g = torch.Generator().manual_seed(args.seed + 7)
    for epoch in range(args.epochs):
        losses.SETTINGS.temperature = temperature_for_epoch(epoch, args.epochs, args.t_start, args.t_end)
        student.train()
        tot = torch.zeros(3)
        t0 = time.time()
        for _ in range(args.steps_per_epoch):
            idx = torch.randint(0, x_train.shape[0], (args.batch_size,), generator=g)
            opt.zero_grad(set_to_none=True)
            loss, ce, kd = step_fn(x_train[idx], y_train[idx])
            opt.step()
            tot += torch.stack([loss, ce, kd])
        tot /= args.steps_per_epoch

        student.eval()
        with torch.no_grad():
            v_logits = student(x_val)
            v_acc = (v_logits.argmax(-1) == y_val).float().mean().item()
            agree = (v_logits.argmax(-1) == teacher(x_val).argmax(-1)).float().mean().item()
        log.info("epoch %d  T=%.3f  loss %.4f  ce %.4f  kd %.4f  val_acc %.4f  teacher_agree %.4f  (%.1fs)",
                 epoch, losses.SETTINGS.temperature, *tot.tolist(), v_acc, agree, time.time() - t0)

    w = torch.cat([p.detach().flatten() for p in student.parameters()])
    log.info("final student weight checksum %.6f", w.double().sum().item())


if __name__ == "__main__":
    main()
