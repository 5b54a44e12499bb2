"""Export the support-ticket router (FNet encoder + classification head) for the
CPU serving fleet.

Steps:
  1. build the model (tiny config for the CI smoke run; prod loads the checkpoint)
  2. a short fine-tune on synthetic tickets so the head is not random
  3. torch.export with dynamic batch / sequence length
  4. parity check of the exported program against eager on held-out batches
  5. save the .pt2 artifact + a metadata json
"""
import json
import os
import random
import time

import torch
from torch.export import Dim
from transformers import FNetConfig, FNetForSequenceClassification

SEED = 1234
LABELS = ["billing", "outage", "account", "feature_request", "other"]
MAX_LEN = 128
VOCAB = 2000
OUT_DIR = os.environ.get("EXPORT_DIR", "/tmp/ticket_router_export")

random.seed(SEED)
torch.manual_seed(SEED)


# --------------------------------------------------------------------------
# data: a toy "tokenizer" that produces the same dict a HF tokenizer returns
# --------------------------------------------------------------------------
KEYWORDS = {
    0: [11, 12, 13, 14],      # invoice, refund, charge, card
    1: [21, 22, 23, 24],      # down, 500, timeout, outage
    2: [31, 32, 33, 34],      # password, login, 2fa, email
    3: [41, 42, 43, 44],      # please add, would love, support for, roadmap
    4: [51, 52, 53, 54],
}


def make_ticket(label):
    n = random.randint(8, 60)
    toks = [random.randint(100, VOCAB - 1) for _ in range(n)]
    for _ in range(random.randint(2, 5)):
        toks[random.randrange(n)] = random.choice(KEYWORDS[label])
    return [2] + toks + [3]  # [CLS] ... [SEP]


def collate(tickets, pad_id=0):
    """Pads like tokenizer(..., padding=True, return_tensors='pt')."""
    width = min(MAX_LEN, max(len(t) for t in tickets))
    ids = torch.full((len(tickets), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(tickets), width), dtype=torch.long)
    for i, t in enumerate(tickets):
        t = t[:width]
        ids[i, : len(t)] = torch.tensor(t)
        mask[i, : len(t)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def make_batches(n_batches, batch_size):
    out = []
    for _ in range(n_batches):
        labels = [random.randrange(len(LABELS)) for _ in range(batch_size)]
        batch = collate([make_ticket(y) for y in labels])
        batch["labels"] = torch.tensor(labels)
        out.append(batch)
    return out


# --------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------
def build_model():
    cfg = FNetConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        num_hidden_layers=4,
        intermediate_size=256,
        max_position_embeddings=MAX_LEN,
        type_vocab_size=2,
        num_labels=len(LABELS),
        pad_token_id=0,
    )
    cfg.id2label = dict(enumerate(LABELS))
    cfg.label2id = {v: k for k, v in cfg.id2label.items()}
    return FNetForSequenceClassification(cfg)


def finetune(model, batches, epochs=3, lr=1e-3):
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for ep in range(epochs):
        tot, correct, n = 0.0, 0, 0
        for b in batches:
            out = model(**b)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            tot += out.loss.item() * len(b["labels"])
            correct += (out.logits.argmax(-1) == b["labels"]).sum().item()
            n += len(b["labels"])
        print(f"[train] epoch {ep}: loss {tot / n:.4f} acc {correct / n:.3f}")
    model.eval()
    return model


# --------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------
def serving_inputs(batch):
    """What the serving frontend sends: the tokenizer output, no labels."""
    return {k: v for k, v in batch.items() if k != "labels"}


def export_model(model, example):
    batch = Dim("batch", min=1, max=64)
    seq = Dim("seq", min=4, max=MAX_LEN)
    dynamic_shapes = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: seq},
    }
    t0 = time.time()
    ep = torch.export.export(model, (), serving_inputs(example), dynamic_shapes=dynamic_shapes)
    print(f"[export] done in {time.time() - t0:.1f}s, "
          f"{len(ep.graph_signature.user_inputs)} user inputs")
    return ep


@torch.no_grad()
def parity_check(model, served, batches, atol=1e-4):
    worst = 0.0
    agree = 0
    total = 0
    for b in batches:
        inp = serving_inputs(b)
        ref = model(**inp).logits
        got = served(**inp)
        got = got.logits if hasattr(got, "logits") else got[0]
        worst = max(worst, (ref - got).abs().max().item())
        agree += (ref.argmax(-1) == got.argmax(-1)).sum().item()
        total += ref.shape[0]
    print(f"[parity] max |eager - exported| = {worst:.2e}, argmax agreement {agree}/{total}")
    return worst <= atol and agree == total


def main():
    t_start = time.time()
    train = make_batches(24, 16)
    held_out = make_batches(4, 8) + make_batches(2, 3)

    model = finetune(build_model(), train)

    ep = export_model(model, held_out[0])
    served = ep.module()

    ok = parity_check(model, served, held_out)
    if not ok:
        raise SystemExit("[parity] FAILED - not publishing artifact")

    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "ticket_router.pt2")
    torch.export.save(ep, path)
    with open(os.path.join(OUT_DIR, "ticket_router.json"), "w") as f:
        json.dump({"labels": LABELS, "max_len": MAX_LEN,
                   "torch": torch.__version__}, f, indent=2)
    print(f"[publish] wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB) "
          f"in {time.time() - t_start:.1f}s total")


if __name__ == "__main__":
    main()
