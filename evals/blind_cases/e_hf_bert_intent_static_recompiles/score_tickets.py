"""Nightly ticket-routing job: score the day's support tickets with the intent classifier."""
import argparse
import collections
import time

import torch
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForSequenceClassification

from data import INTENTS, PadCollator, WordTokenizer, make_tickets

COMPILE_KWARGS = dict(dynamic=False)  # same settings as the online serving image
ROUTE_THRESHOLD = 0.30


def load_classifier(vocab_size):
    cfg = BertConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=256,
        max_position_embeddings=128,
        num_labels=len(INTENTS),
    )
    torch.manual_seed(0)  # stands in for from_pretrained(<fine-tuned checkpoint>) in CI
    model = BertForSequenceClassification(cfg)
    return model.eval()


@torch.inference_mode()
def score(model, loader):
    routed = collections.Counter()
    batch_ms = []
    n = 0
    for batch in loader:
        t0 = time.perf_counter()
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        probs = logits.softmax(-1)
        conf, pred = probs.max(-1)
        batch_ms.append(1000 * (time.perf_counter() - t0))
        for c, p in zip(conf.tolist(), pred.tolist()):
            routed[list(INTENTS)[p] if c >= ROUTE_THRESHOLD else "human_review"] += 1
        n += len(pred)
    return n, routed, batch_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--tickets", type=int, default=3000)
    ap.add_argument("--batch-size", type=int, default=48)
    args = ap.parse_args()

    tok = WordTokenizer()
    tickets = make_tickets(args.tickets, seed=7)
    loader = DataLoader(tickets, batch_size=args.batch_size, collate_fn=PadCollator(tok))
    model = load_classifier(len(tok))
    runner = model if args.no_compile else torch.compile(model, **COMPILE_KWARGS)

    t0 = time.perf_counter()
    n, routed, batch_ms = score(runner, loader)
    wall = time.perf_counter() - t0
    steady = sorted(batch_ms[len(batch_ms) // 2:])
    print(f"scored {n} tickets in {wall:.1f}s ({n / wall:.0f} tickets/s)")
    print(f"batch latency: first {batch_ms[0]:.0f} ms, median of second half {steady[len(steady) // 2]:.1f} ms, "
          f"max {max(batch_ms):.0f} ms")
    print("routing:", dict(sorted(routed.items())))


if __name__ == "__main__":
    main()
