"""Multi-task fine-tuning of a small BERT encoder on mixed support-ticket data.

Each ticket can carry labels for any of four tasks (intent, urgency, sentiment,
language).  Annotation coverage differs per data source, so a batch only carries
the labels that were annotated for the source it was drawn from.
"""
import argparse
import logging
import random
import time
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

log = logging.getLogger("multitask")

TASKS = {"intent": 12, "urgency": 3, "sentiment": 3, "language": 5}

# which tasks each annotation source provides labels for
SOURCES = {
    "crm_export": ("intent", "urgency"),
    "survey": ("sentiment",),
    "email_triage": ("urgency", "sentiment", "language"),
    "chat_logs": ("intent", "sentiment"),
    "vendor_b": ("intent", "language"),
    "gold_set": ("intent", "urgency", "sentiment", "language"),
    "social": ("sentiment", "language"),
}


class MultiTaskBert(nn.Module):
    def __init__(self, cfg: BertConfig, tasks: dict):
        super().__init__()
        self.encoder = BertModel(cfg, add_pooling_layer=False)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)
        self.heads = nn.ModuleDict({t: nn.Linear(cfg.hidden_size, n) for t, n in tasks.items()})

    def forward(self, input_ids, attention_mask, labels):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        pooled = self.dropout(pooled)
        losses = {}
        for task, y in labels.items():
            logits = self.heads[task](pooled)
            losses[task] = F.cross_entropy(logits, y)
        total = sum(losses.values()) / len(losses)
        return total, losses


def make_batch(source, batch_size, seq_len, vocab_size, gen):
    lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,), generator=gen)
    input_ids = torch.randint(5, vocab_size, (batch_size, seq_len), generator=gen)
    attention_mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
    input_ids = input_ids * attention_mask
    labels = {}
    for task in SOURCES[source]:
        labels[task] = torch.randint(0, TASKS[task], (batch_size,), generator=gen)
    return input_ids, attention_mask, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    cfg = BertConfig(vocab_size=2000, hidden_size=64, num_hidden_layers=1, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=128)
    model = MultiTaskBert(cfg, TASKS)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    step_fn = torch.compile(model) if args.compile else model

    sources = list(SOURCES)
    weights = [1.0] * len(sources)
    step_times = []
    task_loss = defaultdict(list)
    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        source = random.choices(sources, weights)[0]
        input_ids, attention_mask, labels = make_batch(source, args.batch_size, args.seq_len, cfg.vocab_size, gen)

        t0 = time.perf_counter()
        loss, per_task = step_fn(input_ids, attention_mask, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        step_times.append(dt)
        for t, v in per_task.items():
            task_loss[t].append(v.item())

        if step % args.log_every == 0:
            recent = step_times[-args.log_every:]
            log.info("step %d source=%s loss=%.4f step_time=%.3fs (max %.3fs)",
                     step, source, loss.item(), sum(recent) / len(recent), max(recent))

    total = time.perf_counter() - t_start
    tail = step_times[len(step_times) // 2:]
    log.info("done: %d steps in %.1fs, median step (2nd half) %.4fs, slowest step %.2fs",
             args.steps, total, sorted(tail)[len(tail) // 2], max(step_times))
    for t in TASKS:
        if task_loss[t]:
            log.info("  %-10s mean loss %.4f over %d batches", t, sum(task_loss[t]) / len(task_loss[t]), len(task_loss[t]))


if __name__ == "__main__":
    main()
