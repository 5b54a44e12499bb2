"""CI gate: the torch.compile'd scorer must match the eager scorer on the frozen validation fixture.

Usage: python parity_gate.py [--rows 2048] [--batch 256] [--atol 1e-4]
"""
import argparse
import logging
import os
import sys
import time

import torch

from claims_model import CAT_CARDINALITIES, NUM_FEATURES, ClaimSeverityModel, gaussian_nll

log = logging.getLogger("parity_gate")


def make_fixture(rows, seed=1234):
    g = torch.Generator().manual_seed(seed)
    cats = torch.stack([torch.randint(0, v, (rows,), generator=g) for v in CAT_CARDINALITIES.values()], dim=1)
    nums = torch.randn(rows, NUM_FEATURES, generator=g) * 3.0 + 10.0
    nums[:, :3] = nums[:, :3].abs().log1p()
    target = (nums[:, 0] * 0.3 + cats[:, 0].float() * 0.05 + torch.randn(rows, generator=g) * 0.2)
    return cats, nums, target


def build_checkpoint(path, cats, nums, target, steps=60):
    """Stand-in for the nightly training job: a short fit so the weights are not random."""
    torch.manual_seed(0)
    model = ClaimSeverityModel()
    model.numeric.mean.copy_(nums.mean(0))
    model.numeric.std.copy_(nums.std(0))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, cats.shape[0], (256,))
        mu, ls = model(cats[idx], nums[idx])
        loss = gaussian_nll(mu, ls, target[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.save(model.state_dict(), path)
    log.info("wrote checkpoint %s (final train nll %.4f)", path, loss.item())


def load_scorer(path):
    model = ClaimSeverityModel()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model.eval()


def score_eager(model, cats, nums, batch):
    outs = []
    with torch.inference_mode():
        for s in range(0, cats.shape[0], batch):
            mu, _ = model(cats[s:s + batch], nums[s:s + batch])
            outs.append(mu.clone())
    return torch.cat(outs)


def score_compiled(model, cats, nums, target, batch):
    """Score with the compiled module; also run backward once so the gate exercises the compiled
    backward graph that the fine-tuning job relies on."""
    cmodel = torch.compile(model)
    outs = []
    for s in range(0, cats.shape[0], batch):
        mu, ls = cmodel(cats[s:s + batch], nums[s:s + batch])
        if s == 0:
            gaussian_nll(mu, ls, target[s:s + batch]).backward()
            model.zero_grad(set_to_none=True)
        outs.append(mu.detach())
    return torch.cat(outs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--ckpt", default="/tmp/claims_severity_ckpt.pt")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("torch %s, threads %d", torch.__version__, torch.get_num_threads())

    cats, nums, target = make_fixture(args.rows)
    build_checkpoint(args.ckpt, cats, nums, target)

    torch.manual_seed(0)
    eager_model = load_scorer(args.ckpt)
    compiled_model = load_scorer(args.ckpt)

    t0 = time.perf_counter()
    ref = score_eager(eager_model, cats, nums, args.batch)
    t1 = time.perf_counter()
    got = score_compiled(compiled_model, cats, nums, target, args.batch)
    t2 = time.perf_counter()
    log.info("eager %.2fs, compiled (incl. compile) %.2fs", t1 - t0, t2 - t1)

    diff = (ref - got).abs()
    worst = int(diff.argmax())
    log.info("max |diff| %.3e (row %d: eager %.5f compiled %.5f), mean |diff| %.3e",
             diff.max().item(), worst, ref[worst].item(), got[worst].item(), diff.mean().item())
    log.info("eager val mae %.4f, compiled %.4f",
             (ref - target).abs().mean().item(), (got - target).abs().mean().item())
    if not torch.allclose(ref, got, atol=args.atol, rtol=0):
        log.error("PARITY GATE FAILED: %d / %d rows outside atol=%g",
                  int((diff > args.atol).sum()), diff.numel(), args.atol)
        sys.exit(1)
    log.info("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
