"""CI gate: the compiled model must reproduce eager outputs before we ship compiled inference.

Run by the CPU CI job on every PR that touches ecg_model.py or the serving code.
"""
import sys
import time

import torch

from ecg_model import ECGRhythmNet, RHYTHM_CLASSES, setup_runtime, synthetic_ecg

RTOL = 1e-4
ATOL = 1e-4
N_BATCHES = 3
BATCH = 16


def build_model():
    model = ECGRhythmNet()
    model.eval()
    return model


def main() -> int:
    setup_runtime(seed=1234)
    model = build_model()
    gen = torch.Generator().manual_seed(7)
    batches = [synthetic_ecg(BATCH, generator=gen) for _ in range(N_BATCHES)]

    with torch.inference_mode():
        t0 = time.perf_counter()
        eager = [model(x) for x in batches]
        t_eager = time.perf_counter() - t0

        compiled = torch.compile(model)
        compiled(batches[0])                                   # compile outside the timing
        t0 = time.perf_counter()
        comp = [compiled(x) for x in batches]
        t_comp = time.perf_counter() - t0

    e = torch.cat(eager)
    c = torch.cat(comp)
    max_abs = (e - c).abs().max().item()
    top1_agree = (e.argmax(-1) == c.argmax(-1)).float().mean().item()
    prob_diff = (e.softmax(-1) - c.softmax(-1)).abs().max().item()
    print(f"torch {torch.__version__} | classes={len(RHYTHM_CLASSES)} | batches={N_BATCHES}x{BATCH}")
    print(f"eager {t_eager * 1e3:.1f} ms | compiled {t_comp * 1e3:.1f} ms")
    print(f"logit max |eager-compiled| = {max_abs:.3e}  (logit scale {e.abs().max().item():.3f})")
    print(f"prob  max |eager-compiled| = {prob_diff:.3e}   top-1 agreement = {top1_agree * 100:.2f}%")

    try:
        torch.testing.assert_close(c, e, rtol=RTOL, atol=ATOL)
    except AssertionError as err:
        print("PARITY GATE FAILED")
        print(err)
        return 1
    print("PARITY GATE PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
