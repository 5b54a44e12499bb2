"""Distil a wide teacher MLP into a small student on a synthetic tabular task.

The distillation temperature is annealed linearly over the run; in the final
epoch the schedule reaches T=0, which we treat as plain hard-label training.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("distill")


def make_data(n, d, n_classes, seed):
    centers = torch.randn(n_classes, d, generator=torch.Generator().manual_seed(1234)) * 0.6
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, d, generator=g)
    return x, y


class MLP(nn.Module):
    def __init__(self, d_in, hidden, n_classes, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.LayerNorm(hidden), nn.GELU()]
            d = hidden
        layers.append(nn.Linear(d, n_classes))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def kd_loss(student_logits, teacher_logits, labels, temperature, alpha):
    """Hinton-style distillation loss; temperature 0 means hard labels only."""
    try:
        inv_t = 1.0 / temperature
    except ZeroDivisionError:
        return F.cross_entropy(student_logits, labels)
    soft_student = F.log_softmax(student_logits * inv_t, dim=-1)
    soft_teacher = F.softmax(teacher_logits * inv_t, dim=-1)
    kd = F.kl_div(soft_student, soft_teacher, reduction="batchmean") * (temperature ** 2)
    ce = F.cross_entropy(student_logits, labels)
    return alpha * kd + (1.0 - alpha) * ce


class DistillStep(nn.Module):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def forward(self, x, y, temperature, alpha):
        with torch.no_grad():
            t_logits = self.teacher(x)
        s_logits = self.student(x)
        return kd_loss(s_logits, t_logits, y, temperature, alpha), s_logits


def temperature_at(epoch, epochs, t0):
    # linear anneal, reaching 0 on the last epoch
    return t0 * (1.0 - epoch / (epochs - 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--t0", type=float, default=4.0)
    p.add_argument("--alpha", type=float, default=0.7)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    d, n_classes = 32, 10
    x_tr, y_tr = make_data(4096, d, n_classes, seed=1)
    x_va, y_va = make_data(1024, d, n_classes, seed=2)

    teacher = MLP(d, 256, n_classes, depth=3)
    opt_t = torch.optim.AdamW(teacher.parameters(), lr=args.lr)
    for _ in range(3):  # quick teacher pre-training
        for i in range(0, len(x_tr), args.batch_size):
            xb, yb = x_tr[i:i + args.batch_size], y_tr[i:i + args.batch_size]
            loss = F.cross_entropy(teacher(xb), yb)
            opt_t.zero_grad(set_to_none=True)
            loss.backward()
            opt_t.step()
    teacher.eval()

    student = MLP(d, 48, n_classes, depth=2)
    step_mod = DistillStep(student, teacher)
    step_fn = step_mod if args.no_compile else torch.compile(step_mod)
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        temperature = temperature_at(epoch, args.epochs, args.t0)
        perm = torch.randperm(len(x_tr))
        total, n, t0 = 0.0, 0, time.perf_counter()
        for i in range(0, len(x_tr), args.batch_size):
            idx = perm[i:i + args.batch_size]
            loss, _ = step_fn(x_tr[idx], y_tr[idx], temperature, args.alpha)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(idx)
            n += len(idx)
        with torch.no_grad():
            acc = (student(x_va).argmax(-1) == y_va).float().mean().item()
        log.info("epoch %d T=%.2f train_loss=%.4f val_acc=%.4f (%.1fs)",
                 epoch, temperature, total / n, acc, time.perf_counter() - t0)

    with torch.no_grad():
        acc = (student(x_va).argmax(-1) == y_va).float().mean().item()
    print(f"final student val_acc={acc:.4f}")


if __name__ == "__main__":
    main()
