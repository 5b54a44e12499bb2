"""CI gate: the compiled detector must match eager before we ship the compiled artifact."""
import argparse
import sys
import time

import torch

from bev_net import PillarBEVNet

INFER_THREADS = 2  # same intra-op thread count as the inference hosts


def synthetic_sweep(batch, n_points, seed):
    """Ground plane + a few box-shaped objects, like a downsampled 32-beam sweep."""
    g = torch.Generator().manual_seed(seed)
    clouds, masks = [], []
    for b in range(batch):
        n = int(n_points * (0.8 + 0.2 * torch.rand(1, generator=g)))
        ground = torch.rand(n // 2, 2, generator=g) * 64 - 32
        ground_z = torch.randn(n // 2, 1, generator=g) * 0.05 - 1.7
        centres = torch.rand(6, 2, generator=g) * 50 - 25
        obj_id = torch.randint(0, 6, (n - n // 2,), generator=g)
        obj_xy = centres[obj_id] + torch.randn(n - n // 2, 2, generator=g) * 0.8
        obj_z = torch.rand(n - n // 2, 1, generator=g) * 1.6 - 1.6
        xyz = torch.cat([torch.cat([ground, ground_z], 1), torch.cat([obj_xy, obj_z], 1)], 0)
        intensity = torch.rand(n, 1, generator=g)
        order = torch.randperm(n, generator=g)  # sensor returns are interleaved across rings
        cloud = torch.zeros(n_points, 4)
        cloud[:n] = torch.cat([xyz, intensity], 1)[order]
        mask = torch.zeros(n_points, dtype=torch.bool)
        mask[:n] = True
        clouds.append(cloud)
        masks.append(mask)
    return torch.stack(clouds), torch.stack(masks)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--points", type=int, default=60000)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-4)
    args = p.parse_args()

    torch.set_num_threads(INFER_THREADS)
    torch.manual_seed(0)
    model = PillarBEVNet().eval()
    compiled = torch.compile(model)

    failures = 0
    for seed in range(4):
        points, valid = synthetic_sweep(args.batch, args.points, seed)
        with torch.no_grad():
            ref_hm, ref_box = model(points, valid)
            t0 = time.perf_counter()
            hm, box = compiled(points, valid)
            dt = time.perf_counter() - t0
        for name, a, b in [("heatmap", hm, ref_hm), ("box", box, ref_box)]:
            err = (a - b).abs().max().item()
            ok = torch.allclose(a, b, rtol=args.rtol, atol=args.atol)
            print(f"sweep {seed} {name:8s} max|compiled-eager| = {err:.3e}  {'OK' if ok else 'FAIL'}  ({dt:.1f}s)")
            failures += not ok
    if failures:
        print(f"PARITY GATE FAILED: {failures} mismatching outputs")
        sys.exit(1)
    print("parity gate passed")


if __name__ == "__main__":
    main()
