"""Export the layout UNet with torch.export for the C++/AOTInductor serving path.

Scanned pages arrive at arbitrary resolutions, so height and width must stay
dynamic in the exported program.  After exporting we reload the .pt2 and check it
against eager on page sizes taken from the validation set.
"""
import argparse
import logging
import time

import torch
from torch.export import Dim

from layout_unet import LayoutUNet

log = logging.getLogger("export")

# (height, width) of a sample of validation pages after the 1/4 downscale in preprocessing
VAL_PAGE_SIZES = [(256, 320), (352, 272), (375, 500), (481, 321), (600, 424), (129, 200)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="layout_unet.pt2")
    p.add_argument("--min-size", type=int, default=64)
    p.add_argument("--max-size", type=int, default=2048)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = LayoutUNet().eval()
    example = torch.randn(1, 3, 256, 320)
    with torch.no_grad():
        log.info("eager output on example: %s", tuple(model(example).shape))

    height = Dim("height", min=args.min_size, max=args.max_size)
    width = Dim("width", min=args.min_size, max=args.max_size)
    t0 = time.perf_counter()
    ep = torch.export.export(model, (example,), dynamic_shapes={"x": {2: height, 3: width}})
    log.info("exported in %.1fs; range constraints: %s", time.perf_counter() - t0, ep.range_constraints)
    torch.export.save(ep, args.out)
    served = torch.export.load(args.out).module()

    failures = 0
    with torch.no_grad():
        for h, w in VAL_PAGE_SIZES:
            page = torch.rand(1, 3, h, w)
            try:
                got = served(page)
                ref = model(page)
                diff = (got - ref).abs().max().item()
                ok = diff <= args.atol
                log.info("page %dx%d: out %s max|diff| %.2e %s", h, w, tuple(got.shape), diff, "ok" if ok else "MISMATCH")
                failures += not ok
            except Exception as e:  # keep going so we see every failing size
                log.error("page %dx%d: %s: %s", h, w, type(e).__name__, str(e).splitlines()[0])
                failures += 1
    if failures:
        raise SystemExit(f"{failures}/{len(VAL_PAGE_SIZES)} validation page sizes failed")
    log.info("all %d page sizes OK, saved %s", len(VAL_PAGE_SIZES), args.out)


if __name__ == "__main__":
    main()
