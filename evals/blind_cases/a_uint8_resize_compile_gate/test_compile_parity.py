"""CI gate: the compiled preprocessing path must match eager.

Run: python test_compile_parity.py [--seeds 3] [--atol 1e-4]
Exit code 0 = pass, 1 = fail.
"""
import argparse
import logging
import sys
import time

import torch

from image_processing import OCRImageProcessor, ProcessorConfig

log = logging.getLogger("compile_parity")

# (batch, height, width) of decoded crops we see in production
SHAPES = [(4, 64, 256), (2, 96, 400)]


def fake_crops(batch, h, w, seed):
    g = torch.Generator().manual_seed(seed)
    # text-line crops: mostly light background with dark strokes
    bg = torch.randint(180, 256, (batch, 3, h, w), generator=g, dtype=torch.uint8)
    strokes = torch.rand(batch, 1, h, w, generator=g) < 0.15
    ink = torch.randint(0, 80, (batch, 3, h, w), generator=g, dtype=torch.uint8)
    return torch.where(strokes, ink, bg)


def check(processor, compiled, images, atol, rtol):
    expected = processor(images)
    actual = compiled(images)
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return False, f"shape/dtype {tuple(expected.shape)}/{expected.dtype} vs {tuple(actual.shape)}/{actual.dtype}"
    diff = (expected - actual).abs()
    ok = torch.allclose(expected, actual, atol=atol, rtol=rtol)
    n_bad = int((diff > atol + rtol * expected.abs()).sum())
    return ok, f"max_abs={diff.max().item():.3e} mismatched={n_bad}/{diff.numel()}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--backend", default="inductor")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    processor = OCRImageProcessor(ProcessorConfig())
    compiled = torch.compile(processor.preprocess, backend=args.backend)

    failures = 0
    t0 = time.time()
    for batch, h, w in SHAPES:
        for seed in range(args.seeds):
            images = fake_crops(batch, h, w, seed)
            ok, msg = check(processor, compiled, images, args.atol, args.rtol)
            status = "PASS" if ok else "FAIL"
            log.info("%s shape=%s seed=%d %s", status, (batch, 3, h, w), seed, msg)
            failures += not ok
    log.info("%d checks, %d failed (%.1fs)", len(SHAPES) * args.seeds, failures, time.time() - t0)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
