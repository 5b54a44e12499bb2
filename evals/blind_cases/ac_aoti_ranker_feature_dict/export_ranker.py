"""Train (quick refresh) + export + AOTInductor-package the feed ranker.

usage: python export_ranker.py --out artifacts/ranker.pt2
"""
import argparse
import logging
import os
import time

import torch
from torch.export import Dim

from ranker_model import FeedRanker, synthetic_batch, auc, FEATURE_SPECS

log = logging.getLogger("export_ranker")


def train(model, steps, batch_size, lr):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    for step in range(steps):
        feats, label = synthetic_batch(batch_size, seed=1000 + step)
        loss = loss_fn(model(feats), label)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            log.info("step %4d  loss %.4f", step, loss.item())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="artifacts/ranker.pt2")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(0)
    model = FeedRanker()
    train(model, args.steps, args.batch_size, args.lr)
    model.eval()

    val_feats, val_label = synthetic_batch(4096, seed=7)
    with torch.no_grad():
        log.info("eager val AUC %.4f", auc(model(val_feats), val_label))

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save(model.state_dict(), os.path.join(os.path.dirname(os.path.abspath(args.out)), "ranker_state.pt"))

    # example input in the canonical feature order
    example = {name: torch.randn(16, dim) for name, dim in FEATURE_SPECS.items()}
    batch = Dim("batch", min=1, max=1024)
    dynamic_shapes = ({name: {0: batch} for name in FEATURE_SPECS},)

    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(model, (example,), dynamic_shapes=dynamic_shapes)
    log.info("exported in %.1fs", time.time() - t0)

    t0 = time.time()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=args.out)
    log.info("packaged %s in %.1fs", path, time.time() - t0)

    # release gate: the packaged artifact must match eager on held-out traffic
    runner = torch._inductor.aoti_load_package(path)
    with torch.no_grad():
        ref = model(val_feats)
        got = runner(val_feats)
    diff = (ref - got).abs().max().item()
    log.info("release gate: max |eager - aoti| = %.3g  (AUC aoti %.4f)", diff, auc(got, val_label))
    if diff > 1e-4:
        raise SystemExit("release gate failed")
    log.info("OK")


if __name__ == "__main__":
    main()
