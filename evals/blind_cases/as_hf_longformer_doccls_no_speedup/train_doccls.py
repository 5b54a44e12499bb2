"""Fine-tune a small Longformer document classifier on synthetic long documents.

Usage:
    python train_doccls.py --steps 12 --compile
    python train_doccls.py --steps 12            # eager baseline
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import LongformerConfig, LongformerForSequenceClassification

log = logging.getLogger("doccls")

LABELS = ["billing", "outage", "account", "feature_request"]


def build_model(args):
    cfg = LongformerConfig(
        vocab_size=args.vocab,
        hidden_size=128,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=512,
        attention_window=[32] * 4,
        max_position_embeddings=args.max_len + 8,
        num_labels=len(LABELS),
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        sep_token_id=2,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )
    torch.manual_seed(args.seed)
    return LongformerForSequenceClassification(cfg)


class SyntheticTickets:
    """Long support tickets: a topic word distribution per label, padded to a fixed length."""

    def __init__(self, vocab, max_len, seed):
        self.vocab = vocab
        self.max_len = max_len
        self.g = torch.Generator().manual_seed(seed)
        self.topic_tokens = torch.randint(10, vocab, (len(LABELS), 40), generator=self.g)

    def batch(self, bs):
        labels = torch.randint(0, len(LABELS), (bs,), generator=self.g)
        ids = torch.randint(10, self.vocab, (bs, self.max_len), generator=self.g)
        topic = self.topic_tokens[labels]
        pick = torch.randint(0, topic.size(1), (bs, self.max_len), generator=self.g)
        use_topic = torch.rand(bs, self.max_len, generator=self.g) < 0.3
        ids = torch.where(use_topic, topic.gather(1, pick), ids)
        lengths = torch.randint(self.max_len // 2, self.max_len + 1, (bs,), generator=self.g)
        mask = torch.arange(self.max_len)[None, :] < lengths[:, None]
        ids[:, 0] = 0  # <s>
        ids = torch.where(mask, ids, torch.ones_like(ids))  # pad id 1
        return {"input_ids": ids, "attention_mask": mask.long(), "labels": labels}


def train_step(model, batch):
    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    loss = F.cross_entropy(out.logits, batch["labels"])
    return loss, out.logits


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--max-len", type=int, default=512)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    model = build_model(args)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    data = SyntheticTickets(args.vocab, args.max_len, args.seed + 1)

    step_fn = train_step
    if args.compile:
        step_fn = torch.compile(train_step)
        log.info("torch.compile enabled (torch %s)", torch.__version__)

    times = []
    for step in range(args.steps):
        batch = data.batch(args.batch_size)
        t0 = time.perf_counter()
        loss, logits = step_fn(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        times.append(dt)
        acc = (logits.argmax(-1) == batch["labels"]).float().mean().item()
        log.info("step %3d loss %.4f acc %.2f step_time %.3fs", step, loss.item(), acc, dt)

    steady = times[3:] if len(times) > 4 else times
    log.info("mean steady step time (steps 3+): %.3fs  [%s]",
             sum(steady) / len(steady), "compiled" if args.compile else "eager")


if __name__ == "__main__":
    main()
