"""Lightweight inference worker: only needs the .pt2 package and the tokenizer."""
import time

import torch

from text_features import INTENTS, encode_batch

PACKAGE = "artifacts/intent_w8.pt2"


class IntentService:
    def __init__(self, package_path=PACKAGE):
        self.runner = torch._inductor.aoti_load_package(package_path)

    @torch.inference_mode()
    def predict(self, texts):
        logits = self.runner(encode_batch(texts))
        return logits, [INTENTS[i] for i in logits.argmax(1).tolist()]


def main():
    svc = IntentService()
    golden = torch.load("artifacts/golden.pt")
    t0 = time.perf_counter()
    logits, labels = svc.predict(golden["texts"])
    dt = (time.perf_counter() - t0) * 1e3
    diff = (logits - golden["logits"]).abs().max().item()
    for text, lab in list(zip(golden["texts"], labels))[:5]:
        print(f"{lab:>15s} <- {text}")
    print(f"batch of {len(labels)} in {dt:.1f} ms, max |serve - export| = {diff:.2e}")
    assert diff < 1e-4, "served logits drifted from export-time golden logits"


if __name__ == "__main__":
    main()
