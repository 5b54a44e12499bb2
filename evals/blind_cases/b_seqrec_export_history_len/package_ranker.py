"""Build the serving artifact for the history ranker.

    python package_ranker.py --out ranker.pt2

Exports the model with a dynamic batch and a dynamic history length (users
have anywhere from 1 to MAX_HISTORY recent interactions; we do not pad to a
fixed length in serving), compiles it with AOTInductor and runs a parity check
against eager on a few request shapes before writing the package.
"""
import argparse
import os
import time

import torch
from torch.export import Dim

from model import HistoryRanker

MAX_HISTORY = 200
N_ITEMS = 5000
N_DENSE = 12


def make_request(batch, hist_len, seed):
    g = torch.Generator().manual_seed(seed)
    hist = torch.randint(1, N_ITEMS, (batch, hist_len), generator=g)
    cand = torch.randint(1, N_ITEMS, (batch,), generator=g)
    dense = torch.randn(batch, N_DENSE, generator=g)
    return hist, cand, dense


def load_model(ckpt):
    torch.manual_seed(0)
    model = HistoryRanker(n_items=N_ITEMS, n_dense=N_DENSE)
    if ckpt and os.path.exists(ckpt):
        model.load_state_dict(torch.load(ckpt, map_location="cpu"))
    return model.eval()


def export_model(model):
    batch = Dim("batch", min=1, max=1024)
    hist_len = Dim("hist_len", min=1, max=MAX_HISTORY)
    example = make_request(16, 50, seed=0)
    dynamic_shapes = {
        "hist_ids": {0: batch, 1: hist_len},
        "cand_ids": {0: batch},
        "dense": {0: batch},
    }
    with torch.no_grad():
        return torch.export.export(model, example, dynamic_shapes=dynamic_shapes)


def parity_check(model, runner, shapes):
    worst = 0.0
    for i, (b, l) in enumerate(shapes):
        req = make_request(b, l, seed=100 + i)
        with torch.no_grad():
            ref = model(*req)
            out = runner(*req)
        err = (ref - out).abs().max().item()
        worst = max(worst, err)
        print(f"  batch={b:4d} hist_len={l:3d}  max|diff|={err:.2e}")
    return worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="")
    p.add_argument("--out", default="ranker.pt2")
    args = p.parse_args()

    model = load_model(args.ckpt)
    t0 = time.time()
    ep = export_model(model)
    print(f"exported in {time.time() - t0:.1f}s")

    t0 = time.time()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    print(f"AOTInductor package written to {path} in {time.time() - t0:.1f}s")

    runner = torch._inductor.aoti_load_package(path)
    worst = parity_check(model, runner, [(1, 1), (3, 5), (16, 50), (64, 200)])
    if worst > 1e-4:
        raise SystemExit(f"parity check failed: {worst:.2e}")
    print("parity OK")


if __name__ == "__main__":
    main()
