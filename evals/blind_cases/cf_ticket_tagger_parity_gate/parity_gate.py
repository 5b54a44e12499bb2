"""CI gate: the torch.compile'd tagger must match eager on a fixed validation slice.

usage: python parity_gate.py [--ckpt artifacts/tagger.pt] [--batches 4] [--atol 1e-4] [--rtol 1e-4]
Exit code 0 = pass, 1 = fail.
"""
import argparse
import logging
import os
import sys
import time

import torch

from data import batches, synthetic_tickets
from model import TASKS, build_model
from train import train

log = logging.getLogger("gate")


def load_model(ckpt_path):
    ckpt = torch.load(ckpt_path, map_location="cpu")
    model = build_model()
    model.load_state_dict(ckpt["model"], strict=True)
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="artifacts/tagger.pt")
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(1234)
    if not os.path.exists(args.ckpt):
        log.info("no checkpoint at %s, training one", args.ckpt)
        train(args.ckpt)

    # two independent instances, so the compiled wrapper can't leak state into the reference
    reference = load_model(args.ckpt)
    candidate = torch.compile(load_model(args.ckpt))

    ids, labels = synthetic_tickets(args.batches * args.bs, seed=99)
    worst = {t: 0.0 for t in TASKS}
    agree = {t: 0 for t in TASKS}
    n = 0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for x, _ in batches(ids, labels, args.bs):
            ref = reference(x)
            got = candidate(x)
            for t in TASKS:
                worst[t] = max(worst[t], (ref[t] - got[t]).abs().max().item())
                agree[t] += (ref[t].argmax(-1) == got[t].argmax(-1)).sum().item()
                ok = torch.allclose(ref[t], got[t], atol=args.atol, rtol=args.rtol)
                if not ok:
                    log.debug("mismatch task=%s", t)
            n += x.shape[0]
    log.info("compared %d tickets in %.1fs", n, time.perf_counter() - t0)

    failed = False
    for t in TASKS:
        status = "ok" if worst[t] <= args.atol + args.rtol else "FAIL"
        failed |= status == "FAIL"
        log.info("%-10s max|diff|=%.3e  argmax agreement=%5.1f%%  %s",
                 t, worst[t], 100.0 * agree[t] / n, status)
    log.info("torch %s: parity gate %s", torch.__version__, "FAILED" if failed else "passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
