"""Release gate: train (or reuse) the scorer, package it, and check that the
torch.compile'd serving artifact scores a held-out batch like the eager model.

usage: python ci_gate.py [--steps 150] [--atol 1e-4] [--ckpt /tmp/fraud_ckpt.pt]
"""
import argparse
import json
import logging
import os
import time

import torch
import torch.nn.functional as F

from scorer import FraudScorer, synthetic_transactions

log = logging.getLogger("ci_gate")


def train(model, steps: int, batch: int, seed: int):
    num, cat, y = synthetic_transactions(20_000, seed=seed)
    model.norm.fit(num)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    g = torch.Generator().manual_seed(seed + 1)
    model.train()
    for step in range(1, steps + 1):
        idx = torch.randint(0, num.shape[0], (batch,), generator=g)
        loss = F.binary_cross_entropy_with_logits(model(num[idx], cat[idx]), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            log.info("train step %d loss %.4f", step, loss.item())
    model.eval()
    return model


def package(model, path: str, stats_path: str):
    torch.save({"model": model.state_dict(), "version": 3}, path)
    with open(stats_path, "w") as f:
        json.dump(model.norm.stats(), f)
    log.info("packaged %s (%d tensors) + %s", path, len(model.state_dict()), stats_path)


def load_serving_model(path: str):
    ckpt = torch.load(path, map_location="cpu")
    model = FraudScorer()
    model.load_state_dict(ckpt["model"], strict=True)
    model.eval()
    return torch.compile(model)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--ckpt", default="/tmp/fraud_ckpt.pt")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(args.seed)

    model = train(FraudScorer(), args.steps, args.batch, args.seed)
    stats_path = os.path.splitext(args.ckpt)[0] + "_feature_stats.json"
    package(model, args.ckpt, stats_path)

    serving = load_serving_model(args.ckpt)
    num, cat, y = synthetic_transactions(2048, seed=args.seed + 100)

    with torch.no_grad():
        ref = model(num, cat)
        t0 = time.perf_counter()
        out = serving(num, cat)
        log.info("compiled first call %.1fs", time.perf_counter() - t0)
        out = serving(num, cat)

    diff = (out - ref).abs()
    auc_gap = ((torch.sigmoid(out) > 0.5) != (torch.sigmoid(ref) > 0.5)).float().mean().item()
    log.info("max|diff|=%.3e mean|diff|=%.3e decision flips=%.2f%%",
             diff.max().item(), diff.mean().item(), 100 * auc_gap)
    ok = torch.allclose(out, ref, atol=args.atol, rtol=args.rtol)
    print("PARITY GATE:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
