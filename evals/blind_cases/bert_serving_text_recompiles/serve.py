"""Toy version of our ticket-triage service: a small BERT classifier behind a
predict(text) function. We wrapped predict in torch.compile to cut latency.

    python serve.py
"""
import re
import time

import torch
from transformers import BertConfig, BertForSequenceClassification

LABELS = ["billing", "bug", "feature_request", "account", "other"]
WORDS = ("the a i my to is not and it of for on in with can cannot when after app "
         "login password reset invoice charged twice refund crash crashes error page "
         "export csv button dark mode please add feature account delete email change "
         "slow loading update broken payment card subscription cancel plan upgrade").split()
VOCAB = {w: i + 4 for i, w in enumerate(WORDS)}   # 0 pad, 1 cls, 2 sep, 3 unk
MAX_LEN = 32

torch.manual_seed(0)
cfg = BertConfig(vocab_size=128, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=128, max_position_embeddings=64, num_labels=len(LABELS))
model = BertForSequenceClassification(cfg).eval()


def tokenize(text):
    words = re.findall(r"[a-z]+", text.lower())[: MAX_LEN - 2]
    ids = [1] + [VOCAB.get(w, 3) for w in words] + [2]
    return ids


@torch.compile
def predict(text):
    ids = tokenize(text)
    input_ids = torch.tensor([ids])
    attention_mask = torch.ones_like(input_ids)
    with torch.no_grad():
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    return logits.softmax(-1)[0]


REQUESTS = [
    "I was charged twice for my subscription",
    "App crashes when I click the export button",
    "Please add dark mode",
    "Cannot reset my password",
    "Invoice page is slow loading",
    "How do I delete my account",
    "Refund for the upgrade please",
    "Login error after update",
    "Change email on my account",
    "Payment card broken cannot upgrade plan",
    "Export csv is broken",
    "Cancel my plan",
    "Crash on login page",
]


def main():
    lat = []
    for i, text in enumerate(REQUESTS):
        t0 = time.perf_counter()
        probs = predict(text)
        dt = time.perf_counter() - t0
        lat.append(dt)
        print(f"req {i:2d} {dt*1000:8.1f} ms  -> {LABELS[int(probs.argmax())]:16s} | {text}")
    # steady-state: replay the same traffic again
    t0 = time.perf_counter()
    for text in REQUESTS:
        predict(text)
    replay = (time.perf_counter() - t0) / len(REQUESTS)
    print(f"first pass: total {sum(lat):.1f} s, median {sorted(lat)[len(lat)//2]*1000:.0f} ms/request")
    print(f"replay pass: {replay*1000:.1f} ms/request")


if __name__ == "__main__":
    main()
