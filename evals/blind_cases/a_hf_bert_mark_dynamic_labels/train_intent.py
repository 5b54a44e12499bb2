#!/usr/bin/env python
"""Fine-tune a small BERT intent classifier on synthetic utterances.

Used by the support-bot team to smoke-test the training recipe before the
real run on the cluster.  Batches are padded to the longest utterance in the
batch, and the last batch of an epoch is usually smaller, so the batch and
sequence dimensions are marked dynamic up front to avoid recompiles.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from transformers import BertConfig, BertForSequenceClassification

log = logging.getLogger("train_intent")


class SyntheticIntents(Dataset):
    """Random token sequences whose label depends on a few trigger tokens."""

    def __init__(self, n, vocab_size, num_labels, min_len=8, max_len=48, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.items = []
        for _ in range(n):
            length = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
            ids = torch.randint(5, vocab_size, (length,), generator=g)
            label = int(ids[:4].sum()) % num_labels
            ids[0] = 2  # [CLS]
            self.items.append((ids, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch, pad_id=0):
    max_len = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), max_len), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(batch), max_len), dtype=torch.long)
    for i, (ids, _) in enumerate(batch):
        input_ids[i, : len(ids)] = ids
        attention_mask[i, : len(ids)] = 1
    labels = torch.tensor([label for _, label in batch], dtype=torch.long)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def build_model(args):
    config = BertConfig(
        vocab_size=args.vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=128,
        num_labels=args.num_labels,
        problem_type="single_label_classification",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )
    return BertForSequenceClassification(config)


def mark_batch_dynamic(batch):
    # padded-to-longest batches: both batch size and length vary step to step
    torch._dynamo.mark_dynamic(batch["input_ids"], 0)
    torch._dynamo.mark_dynamic(batch["input_ids"], 1)
    torch._dynamo.mark_dynamic(batch["attention_mask"], 0)
    torch._dynamo.mark_dynamic(batch["attention_mask"], 1)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    for batch in loader:
        out = model(**batch)
        loss_sum += F.cross_entropy(out.logits, batch["labels"], reduction="sum").item()
        correct += (out.logits.argmax(-1) == batch["labels"]).sum().item()
        total += batch["labels"].numel()
    model.train()
    return loss_sum / total, correct / total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--train-size", type=int, default=200)
    p.add_argument("--vocab-size", type=int, default=500)
    p.add_argument("--num-labels", type=int, default=5)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--max-steps", type=int, default=12)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--log-every", type=int, default=4)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)

    train_ds = SyntheticIntents(args.train_size, args.vocab_size, args.num_labels, seed=1)
    eval_ds = SyntheticIntents(64, args.vocab_size, args.num_labels, seed=2)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    eval_dl = DataLoader(eval_ds, batch_size=32, collate_fn=collate)

    model = build_model(args)
    model.train()
    log.info("model params: %.2fM", sum(p.numel() for p in model.parameters()) / 1e6)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    total_steps = min(args.max_steps, args.epochs * math.ceil(len(train_ds) / args.batch_size))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 4) * max(0.0, 1 - s / total_steps)
    )

    step_fn = torch.compile(model) if args.compile else model

    step = 0
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        for batch in train_dl:
            if args.compile:
                mark_batch_dynamic(batch)
            out = step_fn(**batch)
            loss = out.loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % args.log_every == 0:
                log.info("epoch %d step %d loss %.4f lr %.2e (%.1fs)", epoch, step, loss.item(),
                         scheduler.get_last_lr()[0], time.perf_counter() - t0)
            if step >= total_steps:
                break

    eval_loss, acc = evaluate(model, eval_dl)
    log.info("eval loss %.4f acc %.3f", eval_loss, acc)
    log.info("done: %d steps in %.1fs", step, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
