"""Serving-side smoke test for the exported intent model (no model code on this box, only the .pt2).

    python serve.py --artifact intent.pt2
"""
import argparse
import logging
import time

import torch

log = logging.getLogger("serve")


class IntentService:
    def __init__(self, artifact, max_batch=64):
        t0 = time.perf_counter()
        program = torch.export.load(artifact)
        self.model = program.module()
        self.model.eval()
        self.max_batch = max_batch
        log.info("loaded %s in %.2fs", artifact, time.perf_counter() - t0)

    @torch.inference_mode()
    def predict(self, token_ids):
        outs = []
        for chunk in token_ids.split(self.max_batch):
            outs.append(self.model(chunk))
        return torch.cat(outs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--artifact", default="intent.pt2")
    p.add_argument("--max-batch", type=int, default=64)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    golden = torch.load(args.artifact + ".golden")
    svc = IntentService(args.artifact, max_batch=args.max_batch)
    t0 = time.perf_counter()
    logits = svc.predict(golden["ids"])
    dt = time.perf_counter() - t0
    diff = (logits - golden["logits"]).abs().max().item()
    acc = (logits.argmax(-1) == golden["labels"]).float().mean().item()
    log.info("served %d requests in %.1f ms; max |diff| vs golden %.2e; acc %.3f",
             len(logits), 1e3 * dt, diff, acc)
    if diff > 1e-4:
        raise SystemExit("smoke test FAILED: served logits differ from golden")
    log.info("smoke test passed")


if __name__ == "__main__":
    main()
