"""CI gate: the torch.compile'd intent model must match eager on the validation split.

Usage: python parity_gate.py [--backend inductor|aot_eager|eager] [--atol 1e-4] [--rtol 1e-4]
Exit code 0 = pass, 1 = fail.
"""
import argparse
import logging
import sys
import time

import torch

from data import VOCAB, N_INTENTS, make_loader
from model import IntentClassifier

log = logging.getLogger("parity_gate")


def seed_everything(seed):
    import random
    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@torch.no_grad()
def collect(model, loader):
    outs, labels = [], []
    for batch in loader:
        logits = model(batch["input_ids"], batch["attention_mask"])
        outs.append(logits)
        labels.append(batch["label"])
    return outs, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    seed_everything(args.seed)
    model = IntentClassifier(VOCAB, N_INTENTS).eval()
    val_loader = make_loader("val")
    log.info("torch %s | backend=%s | %d val batches", torch.__version__, args.backend, len(val_loader))

    t0 = time.perf_counter()
    eager_out, eager_lbl = collect(model, val_loader)
    log.info("eager pass: %.2fs", time.perf_counter() - t0)

    compiled = torch.compile(model, backend=args.backend)
    t0 = time.perf_counter()
    comp_out, comp_lbl = collect(compiled, val_loader)
    log.info("compiled pass: %.2fs (incl. compile)", time.perf_counter() - t0)

    failures = 0
    worst = 0.0
    for i, (a, b) in enumerate(zip(eager_out, comp_out)):
        diff = (a - b).abs().max().item()
        worst = max(worst, diff)
        ok = torch.allclose(b, a, atol=args.atol, rtol=args.rtol)
        agree = (a.argmax(-1) == b.argmax(-1)).float().mean().item()
        log.info("batch %2d  max|diff|=%.3e  argmax agreement=%.3f  %s", i, diff, agree, "ok" if ok else "MISMATCH")
        failures += not ok

    acc_e = sum((o.argmax(-1) == l).sum().item() for o, l in zip(eager_out, eager_lbl)) / len(val_loader.dataset)
    acc_c = sum((o.argmax(-1) == l).sum().item() for o, l in zip(comp_out, comp_lbl)) / len(val_loader.dataset)
    log.info("val accuracy (untrained weights): eager=%.4f compiled=%.4f", acc_e, acc_c)
    if failures:
        log.error("PARITY GATE FAILED: %d/%d batches out of tolerance (worst max|diff|=%.3e, atol=%g rtol=%g)",
                  failures, len(eager_out), worst, args.atol, args.rtol)
        return 1
    log.info("PARITY GATE PASSED (worst max|diff|=%.3e)", worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
