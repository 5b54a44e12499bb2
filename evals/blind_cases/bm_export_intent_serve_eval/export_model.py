"""Train briefly and export the intent classifier to a .pt2 artifact for the serving box.

    python export_model.py --out intent.pt2
"""
import argparse
import logging

import torch
import torch.nn.functional as F
from torch.export import Dim

from intent_model import ConvIntentClassifier, MAX_LEN, synthetic_batch

log = logging.getLogger("export")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="intent.pt2")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    model = ConvIntentClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(args.steps):
        ids, labels = synthetic_batch(64, seed=1000 + step)
        loss = F.cross_entropy(model(ids), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f", step, loss.item())

    model.eval()
    ids, labels = synthetic_batch(256, seed=7)
    with torch.no_grad():
        acc = (model(ids).argmax(-1) == labels).float().mean().item()
    log.info("held-out acc (eager) %.3f", acc)

    batch = Dim("batch", min=1, max=512)
    ep = torch.export.export(model, (ids[:8],), dynamic_shapes={"token_ids": {0: batch}})
    torch.export.save(ep, args.out)
    torch.save({"ids": ids, "labels": labels, "logits": model(ids).detach()}, args.out + ".golden")
    log.info("exported to %s (+ golden outputs)", args.out)


if __name__ == "__main__":
    main()
