"""Build the serving bundle for the support-ticket intent router.

Steps: fine-tune a small DistilBERT classifier, calibrate the activation-range
monitor (the serving fleet raises a drift alarm when a request pushes a layer
past its calibrated range), export the model with torch.export for the
inference service, check the exported program against eager, and write the
bundle (program + serving config) to ./bundle/.
"""
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim
from transformers import DistilBertConfig, DistilBertForSequenceClassification

INTENTS = [
    "billing", "refund", "login_issue", "shipping_delay",
    "cancel_order", "product_question", "bug_report", "account_update",
]
VOCAB = 3000
PAD_ID = 0
MAX_LEN = 64
THRESHOLD_MARGIN = 1.25
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bundle")


def make_corpus(n, seed):
    """Synthetic tickets: each intent has a few keyword tokens mixed into noise."""
    g = torch.Generator().manual_seed(seed)
    keywords = torch.arange(1, 1 + len(INTENTS) * 6).view(len(INTENTS), 6) + 100
    labels = torch.randint(0, len(INTENTS), (n,), generator=g)
    lengths = torch.randint(12, 48, (n,), generator=g)
    ids = torch.full((n, MAX_LEN), PAD_ID, dtype=torch.long)
    mask = torch.zeros((n, MAX_LEN), dtype=torch.long)
    for i in range(n):
        L = int(lengths[i])
        row = torch.randint(400, VOCAB, (L,), generator=g)
        pos = torch.randperm(L, generator=g)[:4]
        row[pos] = keywords[labels[i], torch.randint(0, 6, (4,), generator=g)]
        row[0] = 101
        ids[i, :L] = row
        mask[i, :L] = 1
    return ids, mask, labels


def batches(ids, mask, labels, bs, shuffle=False, seed=0):
    order = torch.randperm(len(ids), generator=torch.Generator().manual_seed(seed)) if shuffle \
        else torch.arange(len(ids))
    for s in range(0, len(ids), bs):
        idx = order[s:s + bs]
        L = int(mask[idx].sum(1).max())          # trim to longest in batch
        yield ids[idx, :L], mask[idx, :L], labels[idx]


class ActivationRangeMonitor:
    """Per-layer peak |activation|, used to derive the serving drift thresholds."""

    def __init__(self, model):
        self.ranges = {}
        self.calls = {}
        self._handles = []
        for name, mod in model.named_modules():
            if isinstance(mod, nn.Linear) and any(k in name for k in ("out_lin", "ffn.lin2", "pre_classifier")):
                self._handles.append(mod.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            peak = output.detach().abs().amax()
            prev = self.ranges.get(name)
            self.ranges[name] = peak if prev is None else torch.maximum(prev, peak)
            self.calls[name] = self.calls.get(name, 0) + 1
        return hook

    def thresholds(self, margin):
        return {name: peak.item() * margin for name, peak in sorted(self.ranges.items())}


def build_model():
    cfg = DistilBertConfig(
        vocab_size=VOCAB, dim=128, n_layers=3, n_heads=4, hidden_dim=256,
        max_position_embeddings=128, num_labels=len(INTENTS), pad_token_id=PAD_ID,
        dropout=0.1, attention_dropout=0.1, seq_classif_dropout=0.1,
    )
    cfg.id2label = dict(enumerate(INTENTS))
    cfg.label2id = {v: k for k, v in cfg.id2label.items()}
    return DistilBertForSequenceClassification(cfg)


def train(model, data, epochs=4, bs=32, lr=5e-4):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    model.train()
    step = 0
    for ep in range(epochs):
        for ids, mask, labels in batches(*data, bs, shuffle=True, seed=ep):
            out = model(input_ids=ids, attention_mask=mask)
            loss = F.cross_entropy(out.logits, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            if step % 10 == 0:
                print(f"  step {step:3d}  loss {loss.item():.4f}")
    model.eval()


@torch.no_grad()
def evaluate(model, data, bs=64):
    correct = total = 0
    for ids, mask, labels in batches(*data, bs):
        pred = model(input_ids=ids, attention_mask=mask).logits.argmax(-1)
        correct += int((pred == labels).sum())
        total += len(labels)
    return correct / total


def export_for_serving(model, example_ids, example_mask):
    batch = Dim("batch", min=1, max=256)
    seq = Dim("seq", min=2, max=MAX_LEN)
    with torch.no_grad():
        return torch.export.export(
            model, (),
            {"input_ids": example_ids, "attention_mask": example_mask},
            dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}},
        )


@torch.no_grad()
def parity_check(ep, model, data, bs=48):
    served = ep.module()
    worst = 0.0
    for ids, mask, _ in batches(*data, bs):
        ref = model(input_ids=ids, attention_mask=mask).logits
        got = served(input_ids=ids, attention_mask=mask).logits
        worst = max(worst, (ref - got).abs().max().item())
    return worst


def write_bundle(ep, model, monitor, val_acc, worst_diff):
    os.makedirs(OUT_DIR, exist_ok=True)
    torch.export.save(ep, os.path.join(OUT_DIR, "intent_router.pt2"))
    config = {
        "model": "distilbert-intent-router",
        "intents": INTENTS,
        "max_len": MAX_LEN,
        "val_accuracy": round(val_acc, 4),
        "export_parity_max_abs_diff": worst_diff,
        "drift_thresholds": monitor.thresholds(THRESHOLD_MARGIN),
        "calibration_calls": monitor.calls,
    }
    with open(os.path.join(OUT_DIR, "serving_config.json"), "w") as f:
        json.dump(config, f, indent=2)
    return config


def main():
    torch.manual_seed(0)
    t0 = time.time()
    train_data = make_corpus(640, seed=1)
    calib_data = make_corpus(256, seed=2)
    val_data = make_corpus(256, seed=3)

    model = build_model()
    print("fine-tuning ...")
    train(model, train_data)

    monitor = ActivationRangeMonitor(model)
    calib_acc = evaluate(model, calib_data)
    val_acc = evaluate(model, val_data)
    print(f"calibration acc {calib_acc:.3f}  val acc {val_acc:.3f}  "
          f"({len(monitor.ranges)} monitored layers)")

    print("exporting ...")
    ex_ids, ex_mask, _ = next(batches(*val_data, 8))
    ep = export_for_serving(model, ex_ids, ex_mask)
    worst = parity_check(ep, model, val_data)
    print(f"export parity: max |eager - exported| = {worst:.2e}")
    assert worst < 1e-4, "exported program does not match eager"

    cfg = write_bundle(ep, model, monitor, val_acc, worst)
    print(f"wrote bundle to {OUT_DIR} ({len(cfg['drift_thresholds'])} thresholds) "
          f"in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
