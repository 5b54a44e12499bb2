"""Export the moderation classifier and compile it into an AOTInductor package.

Run:  python build_package.py --out moderation.pt2
"""
import argparse
import time

import torch
from torch.export import Dim

from moderation_model import build_model


def example_batch(batch=4, seq=64, vocab=8000):
    ids = torch.randint(1, vocab, (batch, seq))
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[1, 40:] = 0
    ids[1, 40:] = 0
    return ids, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="moderation.pt2")
    ap.add_argument("--default-threshold", type=float, default=0.5)
    args = ap.parse_args()

    model = build_model()
    ids, mask = example_batch()
    batch, seq = Dim("batch", min=1, max=256), Dim("seq", min=2, max=256)
    t0 = time.perf_counter()
    ep = torch.export.export(
        model,
        (ids, mask),
        kwargs={"threshold": args.default_threshold},
        dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq},
                        "threshold": None},
    )
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    print(f"exported + compiled in {time.perf_counter() - t0:.1f}s -> {path}")

    # smoke test: packaged model must match eager on a fresh batch
    runner = torch._inductor.aoti_load_package(path)
    ids2, mask2 = example_batch(batch=7, seq=91)
    with torch.no_grad():
        ref_p, ref_f = model(ids2, mask2, threshold=args.default_threshold)
        got_p, got_f = runner(ids2, mask2, threshold=args.default_threshold)
    torch.testing.assert_close(got_p, ref_p, rtol=1e-4, atol=1e-5)
    assert torch.equal(got_f, ref_f)
    print("smoke test passed: package matches eager")


if __name__ == "__main__":
    main()
