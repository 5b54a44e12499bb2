"""Batch scoring worker: reads reviews (one per line), writes JSON lines with scores."""
import argparse
import json
import logging
import sys
import time

import torch

from review_model import ASPECTS, SENTIMENT, hash_tokenize

log = logging.getLogger("serve")

DEMO = [
    "cheap and it broke after a week",
    "fast shipping, nicely packaged",
    "customer support was helpful but the price went up",
    "runs small, order one size up",
    "meh",
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--package", default="artifacts/review_scorer.pt2")
    p.add_argument("--input", default=None, help="text file, one review per line (default: demo reviews)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--aspect-threshold", type=float, default=0.5)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    t0 = time.perf_counter()
    runner = torch._inductor.aoti_load_package(args.package)
    log.info("loaded %s in %.2fs", args.package, time.perf_counter() - t0)

    texts = DEMO if args.input is None else [l.strip() for l in open(args.input) if l.strip()]
    n = 0
    for i in range(0, len(texts), args.batch_size):
        chunk = texts[i:i + args.batch_size]
        ids, mask = hash_tokenize(chunk)
        with torch.inference_mode():
            scores = runner(ids, mask)
        sent = scores.sentiment_logits.softmax(-1)
        for j, text in enumerate(chunk):
            rec = {
                "text": text,
                "sentiment": SENTIMENT[int(sent[j].argmax())],
                "sentiment_conf": round(float(sent[j].max()), 4),
                "aspects": [a for a, pr in zip(ASPECTS, scores.aspect_probs[j].tolist()) if pr > args.aspect_threshold],
            }
            sys.stdout.write(json.dumps(rec) + "\n")
            n += 1
    log.info("scored %d reviews", n)


if __name__ == "__main__":
    main()
