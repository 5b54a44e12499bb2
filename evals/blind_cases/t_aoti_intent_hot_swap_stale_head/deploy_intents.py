"""Intent service lifecycle: train v1 -> AOTInductor package -> serve -> nightly fine-tune -> hot-swap weights."""
import copy
import logging
import os
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.export import Dim

from intent_model import IntentEncoder, synthetic_batch

logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("intents")
WORKDIR = os.environ.get("INTENT_WORKDIR", tempfile.mkdtemp(prefix="intent_pkg_"))


def fit(model, steps, lr, seed, shift=0):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for s in range(steps):
        ids, mask, y = synthetic_batch(32, seed=seed + s, shift=shift)
        loss = F.cross_entropy(model(ids, mask), y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return loss.item()


def build_package(model, path):
    ids, mask, _ = synthetic_batch(8, seed=999)
    batch, seq = Dim("batch", min=1, max=256), Dim("seq", min=2, max=48)
    with torch.no_grad():
        ep = torch.export.export(model, (ids, mask), dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: seq}))
        return torch._inductor.aoti_compile_and_package(ep, package_path=path)


def hot_swap(runner, state_dict):
    """Push a new checkpoint into the live runner without rebuilding the package."""
    slots = set(runner.get_constant_fqns())
    update = {k: v.detach().contiguous() for k, v in state_dict.items() if k in slots}
    skipped = sorted(set(state_dict) - slots)
    if skipped:
        log.warning("package has no constant slot for %s; leaving as packaged", skipped)
    runner.load_constants(update, check_full_update=True)
    return len(update), skipped


def parity(runner, ref, n_batches=4, seed=5000):
    worst, agree, total = 0.0, 0, 0
    with torch.no_grad():
        for b in range(n_batches):
            ids, mask, _ = synthetic_batch(64, seed=seed + b, shift=1)
            out, exp = runner(ids, mask), ref(ids, mask)
            worst = max(worst, (out - exp).abs().max().item())
            agree += (out.argmax(-1) == exp.argmax(-1)).sum().item()
            total += ids.shape[0]
    return worst, agree / total


def main():
    torch.manual_seed(0)
    v1 = IntentEncoder()
    loss = fit(v1, steps=30, lr=3e-3, seed=0)
    log.info("v1 trained, last loss %.3f", loss)

    t0 = time.perf_counter()
    pkg = build_package(v1, os.path.join(WORKDIR, "intents_v1.pt2"))
    log.info("package built in %.1fs: %s", time.perf_counter() - t0, pkg)
    runner = torch._inductor.aoti_load_package(pkg)

    worst, agree = parity(runner, v1)
    log.info("v1 package vs eager v1: max|diff| %.2e, top-1 agreement %.3f", worst, agree)

    v2 = copy.deepcopy(v1)
    v2.train()
    loss = fit(v2, steps=20, lr=2e-3, seed=100, shift=1)
    log.info("v2 fine-tuned on new traffic, last loss %.3f", loss)

    n, skipped = hot_swap(runner, v2.state_dict())
    log.info("hot-swapped %d tensors into the running package", n)

    worst, agree = parity(runner, v2)
    log.info("swapped package vs eager v2: max|diff| %.2e, top-1 agreement %.3f", worst, agree)
    ok = worst < 1e-3 and agree > 0.999
    print("PARITY", "PASS" if ok else "FAIL", f"max_abs_diff={worst:.4g}", f"top1_agreement={agree:.3f}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
