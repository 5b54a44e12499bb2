"""Train the ticket tagger (eager) and write a checkpoint.

usage: python train.py --out artifacts/tagger.pt [--steps 30]
"""
import argparse
import logging
import os
import time

import torch
import torch.nn.functional as F

from data import batches, synthetic_tickets
from model import TASKS, build_model

log = logging.getLogger("train")


def train(out, steps=30, bs=32, lr=3e-4, seed=0):
    torch.manual_seed(seed)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    ids, labels = synthetic_tickets(steps * bs, seed=seed)
    model.train()
    t0 = time.perf_counter()
    for step, (x, y) in enumerate(batches(ids, labels, bs)):
        out_logits = model(x)
        loss = sum(F.cross_entropy(out_logits[t], y[t]) for t in TASKS)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            log.info("step %3d loss %.4f", step, loss.item())
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    torch.save({"model": model.state_dict(), "tasks": TASKS, "steps": steps}, out)
    log.info("saved %s (%d tensors) in %.1fs", out, len(model.state_dict()), time.perf_counter() - t0)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="artifacts/tagger.pt")
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    train(args.out, args.steps)
