"""Fine-tune a small BERT classifier on a synthetic keyword-intent task and save a checkpoint.

    python train.py --steps 40 --compile --out ckpt.pt
"""
import argparse
import logging
import time

import torch
from transformers import BertConfig, BertForSequenceClassification

from data import NUM_LABELS, VOCAB, make_batch

log = logging.getLogger("train")


def build_model():
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                     vocab_size=VOCAB, num_labels=NUM_LABELS, max_position_embeddings=64)
    return BertForSequenceClassification(cfg)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--bsz", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--out", default="ckpt.pt")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    model = build_model()
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    g = torch.Generator().manual_seed(0)
    t0 = time.time()
    for step in range(args.steps):
        ids, mask, labels = make_batch(args.bsz, g)
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            acc = (out.logits.argmax(-1) == labels).float().mean().item()
            log.info("step %d loss %.4f train_acc %.3f (%.0fs)", step, out.loss.item(), acc, time.time() - t0)
    torch.save({"model": model.state_dict(), "args": vars(args)}, args.out)
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
