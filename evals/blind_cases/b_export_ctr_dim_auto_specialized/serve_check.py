"""Pre-deploy check: run the exported package on request-sized batches and compare to eager."""
import argparse
import logging
import time

import torch

from export_ranker import example_batch
from ranker import Ranker

log = logging.getLogger("serve_check")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pkg", default="ranker.pt2")
    p.add_argument("--batches", default="64,1,17,128")
    p.add_argument("--hist-lens", default="50,20,100")
    p.add_argument("--atol", type=float, default=1e-4)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    eager = Ranker().eval()
    ep = torch.export.load(args.pkg)
    served = ep.module()
    gen = torch.Generator().manual_seed(123)

    failures = 0
    for b in [int(x) for x in args.batches.split(",")]:
        for L in [int(x) for x in args.hist_lens.split(",")]:
            inputs = example_batch(b, L, gen=gen)
            try:
                t0 = time.perf_counter()
                with torch.no_grad():
                    out = served(*inputs)
                    ref = eager(*inputs)
                ms = (time.perf_counter() - t0) * 1e3
                err = (out - ref).abs().max().item()
                ok = err <= args.atol
                failures += not ok
                log.info("batch=%4d hist=%4d max_abs_err=%.2e %s (%.1f ms)", b, L, err, "ok" if ok else "MISMATCH", ms)
            except Exception as e:  # keep going so we see every failing shape
                failures += 1
                log.error("batch=%4d hist=%4d FAILED: %s", b, L, str(e).splitlines()[0])
    if failures:
        raise SystemExit(f"{failures} request shapes failed")
    log.info("all request shapes passed")


if __name__ == "__main__":
    main()
