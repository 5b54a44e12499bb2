"""Export the review scorer and build the AOTInductor package used by serve_reviews.py."""
import argparse
import logging
import os
import time

import torch
import torch.utils._pytree as pytree
from torch.export import Dim

from review_model import ReviewScorer, ReviewScores, hash_tokenize

log = logging.getLogger("package")

# torch.export cannot save a NamedTuple output without a serialized name
pytree._register_namedtuple(ReviewScores, serialized_type_name="reviews.ReviewScores")

SAMPLE = [
    "arrived late and the box was crushed, support never answered",
    "great quality for the price, fits as expected",
    "ok",
    "the size chart is wrong, had to return it. refund took two weeks",
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="review_scorer.pt")
    p.add_argument("--out", default="artifacts/review_scorer.pt2")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    model = ReviewScorer().eval()
    if os.path.exists(args.ckpt):
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
        log.info("loaded %s", args.ckpt)
    else:
        log.info("no checkpoint at %s, packaging random init (smoke build)", args.ckpt)

    ids, mask = hash_tokenize(SAMPLE)
    batch = Dim("batch", min=1, max=64)
    t0 = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(model, (ids, mask),
                                 dynamic_shapes={"input_ids": {0: batch}, "attention_mask": {0: batch}})
    log.info("exported in %.1fs", time.perf_counter() - t0)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    log.info("packaged %s in %.1fs", path, time.perf_counter() - t0)

    # smoke test against eager before shipping
    runner = torch._inductor.aoti_load_package(path)
    with torch.no_grad():
        ref = model(ids, mask)
        got = runner(ids, mask)
    for name in ReviewScores._fields:
        err = (getattr(ref, name) - getattr(got, name)).abs().max().item()
        log.info("smoke %-17s max_abs_err %.2e", name, err)
        assert err < 1e-4, name
    log.info("package OK")


if __name__ == "__main__":
    main()
