"""Intent-classification fine-tune (tiny BERT, random init for CI).

Our CI gate runs this with --check-graph-breaks: the compiled forward must be
captured as a single graph (we rely on that for the perf budget).
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

logger = logging.getLogger("intent.model")


class MeanPoolIntentClassifier(nn.Module):
    def __init__(self, cfg: BertConfig, num_labels: int):
        super().__init__()
        self.bert = BertModel(cfg, add_pooling_layer=False)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)
        self.head = nn.Linear(cfg.hidden_size, num_labels)

    def pool(self, hidden, attention_mask):
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        summed = (hidden * mask).sum(dim=1)
        count = mask.sum(dim=1).clamp(min=1.0)
        pooled = summed / count
        # handy when debugging padding problems; silent at the default WARNING level
        logger.debug("pooled batch: %s tokens/row avg", count.mean())
        return pooled

    def forward(self, input_ids, attention_mask, labels=None):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        pooled = self.pool(hidden, attention_mask)
        logits = self.head(self.dropout(pooled))
        if labels is None:
            return logits
        loss = F.cross_entropy(logits, labels)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("loss=%.4f", loss.item())
        return loss, logits


def make_batch(bs, seq, vocab, num_labels, gen):
    lengths = torch.randint(seq // 2, seq + 1, (bs,), generator=gen)
    ids = torch.randint(5, vocab, (bs, seq), generator=gen)
    mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    ids = ids * mask  # pad id 0
    labels = torch.randint(0, num_labels, (bs,), generator=gen)
    return ids, mask, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--check-graph-breaks", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64)
    model = MeanPoolIntentClassifier(cfg, num_labels=7)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

    cmodel = torch.compile(model, fullgraph=args.check_graph_breaks)

    gen = torch.Generator().manual_seed(1)
    for step in range(args.steps):
        ids, mask, labels = make_batch(16, 32, cfg.vocab_size, 7, gen)
        t0 = time.perf_counter()
        loss, _ = cmodel(ids, mask, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print(f"step {step} loss {loss.item():.4f} ({time.perf_counter() - t0:.2f}s)")

    if args.check_graph_breaks:
        print("CI gate: OK, forward captured as one graph")


if __name__ == "__main__":
    main()
