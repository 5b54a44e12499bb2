"""Build the AOTInductor package that the serving workers load.

    python export_frame_classifier.py --out artifacts
"""
import argparse
import os
import time

import torch
from torch.export import Dim

from model import IMAGE_SIZE, build_model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="artifacts")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    model = build_model()
    torch.save(model.state_dict(), os.path.join(args.out, "frame_classifier.pth"))

    example = torch.rand(4, 3, IMAGE_SIZE, IMAGE_SIZE)
    batch = Dim("batch", min=1, max=8)
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, (example,), dynamic_shapes={"frames": {0: batch}})
        pkg = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.abspath(os.path.join(args.out, "frame_classifier.pt2"))
        )
    print(f"exported + compiled in {time.time() - t0:.1f}s -> {pkg}")

    # release gate: package must match eager on a few batch sizes
    runner = torch._inductor.aoti_load_package(pkg)
    worst = 0.0
    with torch.no_grad():
        for bs in (2, 5, 8):
            x = torch.rand(bs, 3, IMAGE_SIZE, IMAGE_SIZE)
            worst = max(worst, (runner(x) - model(x)).abs().max().item())
    print(f"parity check vs eager: max |diff| = {worst:.2e}  ->  {'OK' if worst < 1e-3 else 'FAIL'}")


if __name__ == "__main__":
    main()
