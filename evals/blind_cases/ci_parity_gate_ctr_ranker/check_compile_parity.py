"""CI gate: the torch.compile'd ranker must reproduce eager outputs before we ship
the compiled artifact to the serving fleet.

Exit code 0 = parity OK, 1 = parity failure.
"""
import argparse
import json
import logging
import sys
import time

import torch

from ctr_model import RankerConfig, build_model, synthetic_batch

log = logging.getLogger("compile_parity")


def run(model, batches):
    outs = []
    with torch.no_grad():
        for dense, ids, offs in batches:
            logits, emb = model(dense, ids, offs)
            outs.append((logits.clone(), emb.clone()))
    return outs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--backend", default="inductor")
    p.add_argument("--report", default=None, help="optional path for a JSON summary")
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    log.info("torch %s, backend=%s", torch.__version__, args.backend)

    cfg = RankerConfig()
    torch.manual_seed(args.seed)
    eager_model = build_model(cfg).eval()
    compiled_model = torch.compile(build_model(cfg).eval(), backend=args.backend)

    gen = torch.Generator().manual_seed(args.seed)
    batches = [synthetic_batch(cfg, args.batch_size, gen) for _ in range(args.batches)]

    t0 = time.perf_counter()
    ref = run(eager_model, batches)
    t_eager = time.perf_counter() - t0
    t0 = time.perf_counter()
    got = run(compiled_model, batches)
    t_compiled = time.perf_counter() - t0
    log.info("eager %.2fs, compiled (incl. compile) %.2fs", t_eager, t_compiled)

    summary = {"batches": args.batches, "rtol": args.rtol, "atol": args.atol, "failures": []}
    for i, ((ref_logits, ref_emb), (logits, emb)) in enumerate(zip(ref, got)):
        max_diff = (logits - ref_logits).abs().max().item()
        log.info("batch %d: max |logit diff| = %.3e", i, max_diff)
        try:
            torch.testing.assert_close(logits, ref_logits, rtol=args.rtol, atol=args.atol)
            assert torch.testing.assert_close(emb, ref_emb, rtol=args.rtol, atol=args.atol), \
                f"pooled embeddings differ on batch {i}"
        except AssertionError as e:
            log.error("parity failure on batch %d: %s", i, e)
            summary["failures"].append({"batch": i, "max_logit_diff": max_diff, "error": str(e)})

    if args.report:
        with open(args.report, "w") as f:
            json.dump(summary, f, indent=2)
    if summary["failures"]:
        log.error("FAILED: %d/%d batches out of tolerance", len(summary["failures"]), args.batches)
        return 1
    log.info("PASSED: compiled ranker matches eager on %d batches", args.batches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
