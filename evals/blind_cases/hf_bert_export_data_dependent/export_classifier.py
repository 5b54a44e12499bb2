"""Export our BERT intent classifier with torch.export for the serving team.

The serving wrapper does a bit of input sanitation (requests with an all-zero
attention mask used to produce NaNs, so we force the [CLS] token on for those rows)
and returns calibrated probabilities.

    python export_classifier.py --out intent_classifier.pt2
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
from torch.export import Dim, export
from transformers import BertConfig, BertForSequenceClassification

log = logging.getLogger("export")


class ServingWrapper(nn.Module):
    def __init__(self, model: nn.Module, temperature: float = 1.5):
        super().__init__()
        self.model = model
        self.temperature = temperature

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        empty_rows = attention_mask.sum(dim=-1) == 0
        if empty_rows.any():                          # sanitize degenerate requests
            attention_mask = attention_mask.clone()
            attention_mask[empty_rows, 0] = 1
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        return torch.softmax(logits / self.temperature, dim=-1)


def example_batch(bsz, seqlen, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, vocab, (bsz, seqlen), generator=g)
    lens = torch.randint(1, seqlen + 1, (bsz,), generator=g)
    mask = (torch.arange(seqlen)[None] < lens[:, None]).long()
    return ids, mask


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="intent_classifier.pt2")
    p.add_argument("--num-labels", type=int, default=7)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=128, vocab_size=1000, num_labels=args.num_labels)
    model = ServingWrapper(BertForSequenceClassification(cfg).eval()).eval()

    ids, mask = example_batch(4, 32, cfg.vocab_size)
    batch = Dim("batch", min=1, max=64)
    seq = Dim("seq", min=2, max=cfg.max_position_embeddings)
    t = time.time()
    ep = export(model, (ids, mask),
                dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}})
    log.info("exported in %.1fs", time.time() - t)

    ids2, mask2 = example_batch(3, 48, cfg.vocab_size, seed=1)
    mask2[1] = 0   # degenerate request
    with torch.no_grad():
        ref = model(ids2, mask2)
        got = ep.module()(ids2, mask2)
    log.info("max|exported - eager| = %.2e", (ref - got).abs().max().item())
    torch.export.save(ep, args.out)
    log.info("saved %s", args.out)


if __name__ == "__main__":
    main()
