"""CI gate: torch.compile'd ranker must match eager on a fixed fixture batch.

    python parity_gate.py                # default tolerances
    python parity_gate.py --rtol 1e-4
"""
import argparse
import sys
import time

import torch

from ranker import FreshnessRanker, N_SECTIONS, N_TOKENS


def make_fixture(batch, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, 16, (batch,), generator=g)
    title_ids = torch.randint(0, N_TOKENS, (int(lengths.sum()),), generator=g)
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    section = torch.randint(0, N_SECTIONS, (batch,), generator=g)
    user = torch.randn(batch, 64, generator=g)
    # articles published within the last two days
    age_s = torch.rand(batch, generator=g, dtype=torch.float64) * 48 * 3600
    published = torch.full((batch,), time.time(), dtype=torch.float64) - age_s
    return title_ids, offsets, section, user, published


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-6)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = FreshnessRanker().eval()
    compiled = torch.compile(model)
    batch = make_fixture(args.batch, args.seed)

    with torch.no_grad():
        t0 = time.perf_counter()
        ref = model(*batch)
        t1 = time.perf_counter()
        out = compiled(*batch)
        t2 = time.perf_counter()
        out2 = compiled(*batch)

    print(f"torch {torch.__version__}  batch={args.batch}  eager {1e3*(t1-t0):.1f} ms  "
          f"compiled first call {t2-t1:.1f} s")
    abs_err = (out - ref).abs()
    rel_err = abs_err / ref.abs().clamp(min=1e-12)
    print(f"max abs err {abs_err.max().item():.3e}   max rel err {rel_err.max().item():.3e}   "
          f"mean rel err {rel_err.mean().item():.3e}")
    print(f"top-10 identical: {torch.equal(ref.topk(10).indices, out.topk(10).indices)}")
    ok = torch.allclose(out, ref, rtol=args.rtol, atol=args.atol) and torch.allclose(out2, ref, rtol=args.rtol, atol=args.atol)
    print("PARITY", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
