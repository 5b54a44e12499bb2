"""Evaluate a saved checkpoint on held-out synthetic data.

    python evaluate.py --ckpt ckpt.pt
"""
import argparse
import logging

import torch

from data import make_batch
from train import build_model

log = logging.getLogger("eval")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default="ckpt.pt")
    p.add_argument("--batches", type=int, default=20)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(1234)
    model = build_model().eval()
    state = torch.load(args.ckpt, map_location="cpu")["model"]
    # strict=False: checkpoints from older runs still carry the (unused) pooler weights
    # and newer transformers versions renamed a few buffers; don't fail on those.
    model.load_state_dict(state, strict=False)

    g = torch.Generator().manual_seed(999)
    correct = total = 0
    with torch.no_grad():
        for _ in range(args.batches):
            ids, mask, labels = make_batch(64, g)
            pred = model(input_ids=ids, attention_mask=mask).logits.argmax(-1)
            correct += (pred == labels).sum().item()
            total += labels.numel()
    log.info("held-out accuracy %.3f on %d examples", correct / total, total)


if __name__ == "__main__":
    main()
