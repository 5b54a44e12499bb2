"""CI gate: the compiled distillation step must reproduce the eager one.

We distill a 1000-class teacher into a student that is warm-started from a pruned copy of
the teacher. Before enabling torch.compile for the nightly distillation job, this gate checks
that the compiled loss matches eager on a few fixed batches.

    python kd_parity_check.py [--rtol 1e-5] [--batches 4]
"""
import argparse
import copy
import logging
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("kd_gate")


class Classifier(nn.Module):
    def __init__(self, d_in=256, hidden=512, n_classes=1000):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def distill_loss(student_logits, teacher_logits, labels, temperature=4.0, alpha=0.9):
    soft = F.kl_div(
        F.log_softmax(student_logits / temperature, dim=-1),
        F.softmax(teacher_logits / temperature, dim=-1),
        reduction="batchmean",
    ) * temperature ** 2
    hard = F.cross_entropy(student_logits, labels)
    return alpha * soft + (1 - alpha) * hard, soft


def kd_step(student, teacher, x, labels):
    with torch.no_grad():
        t_logits = teacher(x)
    s_logits = student(x)
    return distill_loss(s_logits, t_logits, labels)


def build_models(seed):
    torch.manual_seed(seed)
    teacher = Classifier()
    for m in teacher.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=1.5 / m.in_features ** 0.5)
    student = copy.deepcopy(teacher)
    with torch.no_grad():          # warm start: magnitude-prune 5% of the student's weights
        for m in student.modules():
            if isinstance(m, nn.Linear):
                thr = m.weight.abs().flatten().kthvalue(int(0.05 * m.weight.numel())).values
                m.weight[m.weight.abs() < thr] = 0.0
    return teacher.eval(), student.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")

    teacher, student = build_models(args.seed)
    compiled_step = torch.compile(kd_step)
    g = torch.Generator().manual_seed(args.seed + 1)
    failures = 0
    for b in range(args.batches):
        x = torch.randn(args.batch_size, 256, generator=g)
        labels = torch.randint(0, 1000, (args.batch_size,), generator=g)
        eager_total, eager_soft = kd_step(student, teacher, x, labels)
        comp_total, comp_soft = compiled_step(student, teacher, x, labels)
        for name, e, c in [("total", eager_total, comp_total), ("soft_kd", eager_soft, comp_soft)]:
            rel = ((e - c).abs() / e.abs()).item()
            ok = rel <= args.rtol
            failures += not ok
            log.info("batch %d %-7s eager %.9g  compiled %.9g  rel diff %.2e  %s",
                     b, name, e.item(), c.item(), rel, "ok" if ok else "MISMATCH")
    if failures:
        log.error("parity gate FAILED: %d mismatches (rtol=%g), torch %s", failures, args.rtol, torch.__version__)
        sys.exit(1)
    log.info("parity gate passed")


if __name__ == "__main__":
    main()
