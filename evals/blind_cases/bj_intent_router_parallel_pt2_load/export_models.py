"""Export one intent classifier per locale to artifacts/intent_<locale>.pt2 (torch.export)."""
import argparse
import logging
import os
import time

import torch

from intent_model import IntentClassifier

LOCALES = ["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT"]

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("export")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="artifacts")
    ap.add_argument("--max-len", type=int, default=64)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    batch = torch.export.Dim("batch", min=1, max=128)
    seq = torch.export.Dim("seq", min=2, max=args.max_len)
    for i, loc in enumerate(LOCALES):
        torch.manual_seed(1000 + i)  # stand-in for the fine-tuned checkpoint of each locale
        model = IntentClassifier(max_len=args.max_len).eval()
        ids = torch.randint(1, 8000, (4, 16))
        mask = torch.ones(4, 16, dtype=torch.long)
        mask[1, 11:] = 0
        t0 = time.perf_counter()
        ep = torch.export.export(model, (ids, mask),
                                 dynamic_shapes={"input_ids": {0: batch, 1: seq},
                                                 "attention_mask": {0: batch, 1: seq}})
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(ids, mask), model(ids, mask))
        path = os.path.join(args.out, f"intent_{loc}.pt2")
        torch.export.save(ep, path)
        log.info("%s: exported in %.1fs -> %s (%.1f MB)", loc, time.perf_counter() - t0, path,
                 os.path.getsize(path) / 1e6)


if __name__ == "__main__":
    main()
