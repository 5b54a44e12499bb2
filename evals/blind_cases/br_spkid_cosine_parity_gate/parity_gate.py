"""Release gate: the compiled serving model must match eager on the fixture set.

Usage: python parity_gate.py [--ckpt spk.pt] [--atol 1e-3]
If the checkpoint does not exist, a short training run creates it.
"""
import argparse
import logging
import os
import time

import torch
import torch.nn.functional as F

from spk_model import build_model

CFG = {"n_mels": 40, "n_speakers": 64, "emb_dim": 96, "frames": 120}
log = logging.getLogger("parity_gate")


def synth_batch(gen, n, centers):
    spk = torch.randint(0, centers.shape[0], (n,), generator=gen)
    base = centers[spk].unsqueeze(1).expand(n, CFG["frames"], CFG["n_mels"])
    feats = base + 0.8 * torch.randn(n, CFG["frames"], CFG["n_mels"], generator=gen)
    return feats, spk


def train_checkpoint(path, steps=60):
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(1)
    centers = torch.randn(CFG["n_speakers"], CFG["n_mels"], generator=gen)
    model = build_model(CFG)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        feats, spk = synth_batch(gen, 32, centers)
        loss = F.cross_entropy(model(feats), spk)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            log.info("train step %d loss %.4f", step, loss.item())
    torch.save({"model": model.state_dict(), "centers": centers}, path)


def smoke_check(model):
    """Catch shape/config mistakes before spending time on the checkpoint."""
    model.eval()
    with torch.no_grad():
        out = model(torch.randn(2, CFG["frames"], CFG["n_mels"]))
    assert out.shape == (2, CFG["n_speakers"]), out.shape


def load_for_serving(path, smoke=True):
    ckpt = torch.load(path, weights_only=True)
    model = build_model(CFG)
    if smoke:
        smoke_check(model)
    model.load_state_dict(ckpt["model"])
    return model.eval(), ckpt["centers"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="spk.pt")
    ap.add_argument("--atol", type=float, default=1e-3)
    ap.add_argument("--backend", default="inductor")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(0)

    if not os.path.exists(args.ckpt):
        log.info("no checkpoint at %s, training one", args.ckpt)
        train_checkpoint(args.ckpt)

    eager_model, centers = load_for_serving(args.ckpt)
    served, _ = load_for_serving(args.ckpt, smoke=False)
    compiled = torch.compile(served, backend=args.backend)

    gen = torch.Generator().manual_seed(123)
    fixtures = [synth_batch(gen, 16, centers) for _ in range(4)]

    worst, agree, total, acc_e, acc_c = 0.0, 0, 0, 0, 0
    t0 = time.time()
    with torch.no_grad():
        for i, (feats, spk) in enumerate(fixtures):
            ref = eager_model(feats)
            out = compiled(feats)
            diff = (ref - out).abs().max().item()
            worst = max(worst, diff)
            agree += (ref.argmax(1) == out.argmax(1)).sum().item()
            acc_e += (ref.argmax(1) == spk).sum().item()
            acc_c += (out.argmax(1) == spk).sum().item()
            total += feats.shape[0]
            log.info("fixture %d max|eager-compiled| = %.4g", i, diff)
    log.info("compiled+run time %.1fs", time.time() - t0)
    log.info("top-1 agreement %d/%d, eager acc %.3f, compiled acc %.3f", agree, total, acc_e / total, acc_c / total)
    if worst > args.atol:
        log.error("PARITY GATE FAILED: max abs diff %.4g > atol %.1g", worst, args.atol)
        raise SystemExit(1)
    log.info("PARITY GATE PASSED (max abs diff %.3g)", worst)


if __name__ == "__main__":
    main()
