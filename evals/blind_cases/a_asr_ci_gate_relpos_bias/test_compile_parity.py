"""CI gate: the compiled keyword spotter must match eager on the held-out set.

    python test_compile_parity.py
"""
import sys
import time

import torch

from model import KeywordSpotter

ATOL = 1e-4
RTOL = 1e-4


def heldout_batches(n_batches=6, batch=16, frames=200, n_mels=40, seed=11):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        feats = torch.randn(batch, frames, n_mels, generator=g)
        # log-mel-like: per-utterance mean/var normalisation
        feats = (feats - feats.mean(1, keepdim=True)) / feats.std(1, keepdim=True)
        yield feats


def run(model, batches):
    outs = []
    with torch.no_grad():
        for feats in batches:
            outs.append(model(feats))
    return outs


def main():
    torch.manual_seed(0)
    model = KeywordSpotter().eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}

    batches = list(heldout_batches())

    t0 = time.time()
    eager_out = run(model, batches)
    t_eager = time.time() - t0

    model.load_state_dict(state)
    compiled = torch.compile(model)
    t0 = time.time()
    comp_out = run(compiled, batches)
    t_comp = time.time() - t0

    failed = False
    for i, (e, c) in enumerate(zip(eager_out, comp_out)):
        diff = (e - c).abs().max().item()
        agree = (e.argmax(-1) == c.argmax(-1)).float().mean().item()
        ok = torch.allclose(e, c, atol=ATOL, rtol=RTOL)
        failed |= not ok
        print(f"batch {i}: max|eager-compiled|={diff:.3e} top1_agree={agree:.3f} {'OK' if ok else 'MISMATCH'}")
    print(f"eager {t_eager:.1f}s, compiled (incl. compile) {t_comp:.1f}s")
    if failed:
        print("FAIL: compiled model diverges from eager")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
