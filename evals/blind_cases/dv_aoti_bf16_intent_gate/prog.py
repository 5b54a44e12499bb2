"""Nightly packaging job for the intent router.

1. smoke-train the intent classifier on the synthetic utterance set (CI stand-in for the
   real fine-tune, same architecture and head),
2. export it and build the bf16 AOTInductor package that the router pods load,
3. release gate: the package must agree with the bf16 eager model on the held-out requests.
"""
import os
import random
import tempfile
import time
import zlib

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

SEED = 1234
SEQ_LEN = 32
SERVE_BATCH = 16
VOCAB = 4096
PAD_ID, CLS_ID, SEP_ID = 0, 1, 2

# release gate thresholds (bf16 package vs bf16 eager reference)
GATE_MAX_ABS_LOGIT_DIFF = 0.01
GATE_MIN_TOP1_AGREEMENT = 1.0

INTENTS = {
    "check_balance": ["what is my balance", "how much money do i have", "show my account balance"],
    "transfer": ["send money to {n}", "transfer {a} dollars to {n}", "move {a} to savings"],
    "card_lost": ["i lost my card", "my card was stolen", "block my card please"],
    "open_account": ["open a new account", "i want a savings account", "how do i open an account"],
    "loan_rate": ["what is the loan rate", "interest rate for a car loan", "mortgage rates today"],
    "update_address": ["change my address", "i moved to {c}", "update my mailing address"],
    "talk_to_agent": ["let me talk to a person", "connect me to an agent", "human please"],
    "atm_nearby": ["where is the nearest atm", "atm near {c}", "find a cash machine"],
}
LABELS = sorted(INTENTS)
NAMES = ["alice", "bob", "carol", "dan", "erin", "frank"]
CITIES = ["boston", "denver", "austin", "seattle", "miami"]
AMOUNTS = ["20", "50", "100", "250", "1000"]


def tokenize(text):
    ids = [CLS_ID]
    for w in text.lower().split():
        ids.append(3 + zlib.crc32(w.encode()) % (VOCAB - 3))
    ids = ids[: SEQ_LEN - 1] + [SEP_ID]
    mask = [1] * len(ids) + [0] * (SEQ_LEN - len(ids))
    ids = ids + [PAD_ID] * (SEQ_LEN - len(ids))
    return ids, mask


def make_utterances(n, rng):
    out = []
    for _ in range(n):
        label = rng.randrange(len(LABELS))
        tmpl = rng.choice(INTENTS[LABELS[label]])
        text = tmpl.format(n=rng.choice(NAMES), a=rng.choice(AMOUNTS), c=rng.choice(CITIES))
        if rng.random() < 0.3:
            text = rng.choice(["hey", "hi", "please", "um"]) + " " + text
        out.append((text, label))
    return out


def collate(items):
    ids, masks, labels = [], [], []
    for text, label in items:
        i, m = tokenize(text)
        ids.append(i)
        masks.append(m)
        labels.append(label)
    return {
        "input_ids": torch.tensor(ids, dtype=torch.long),
        "attention_mask": torch.tensor(masks, dtype=torch.long),
    }, torch.tensor(labels)


def build_model():
    cfg = BertConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=256,
        max_position_embeddings=64,
        num_labels=len(LABELS),
        attn_implementation="sdpa",
    )
    return BertForSequenceClassification(cfg)


def smoke_train(model, rng, steps=60, batch_size=32):
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    model.train()
    for step in range(steps):
        batch, labels = collate(make_utterances(batch_size, rng))
        logits = model(**batch).logits
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"  train step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    return model


def export_package(model, example, out_dir):
    # the router pods serve in bf16
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        ep = torch.export.export(model, args=(), kwargs=example)
    path = os.path.join(out_dir, "intent_router_bf16.pt2")
    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=path)
    print(f"  packaged {os.path.basename(path)} in {time.perf_counter() - t0:.1f}s")
    return path


@torch.no_grad()
def eager_reference(model, batch):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return model(**batch).logits.float()


@torch.no_grad()
def package_logits(runner, batch):
    out = runner(**batch)
    logits = out.logits if hasattr(out, "logits") else out[0]
    return logits.float()


def release_gate(model, runner, eval_batches):
    worst = 0.0
    agree = total = 0
    correct = 0
    for batch, labels in eval_batches:
        ref = eager_reference(model, batch)
        got = package_logits(runner, batch)
        worst = max(worst, (ref - got).abs().max().item())
        agree += (ref.argmax(-1) == got.argmax(-1)).sum().item()
        correct += (got.argmax(-1) == labels).sum().item()
        total += labels.numel()
    top1 = agree / total
    print(f"  eval requests        : {total}")
    print(f"  package accuracy     : {correct / total:.3f}")
    print(f"  max |logit diff|     : {worst:.4f}   (limit {GATE_MAX_ABS_LOGIT_DIFF})")
    print(f"  top-1 agreement      : {top1:.4f}   (limit {GATE_MIN_TOP1_AGREEMENT})")
    ok = worst <= GATE_MAX_ABS_LOGIT_DIFF and top1 >= GATE_MIN_TOP1_AGREEMENT
    return ok


def main():
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    print(f"torch {torch.__version__}")

    print("[1/3] smoke training")
    model = smoke_train(build_model(), rng)

    print("[2/3] export + AOTInductor package")
    example, _ = collate(make_utterances(SERVE_BATCH, rng))
    out_dir = os.environ.get("PKG_DIR") or tempfile.mkdtemp(prefix="intent_pkg_")
    pkg = export_package(model, example, out_dir)
    runner = torch._inductor.aoti_load_package(pkg)

    print("[3/3] release gate")
    eval_rng = random.Random(SEED + 1)
    eval_batches = [collate(make_utterances(SERVE_BATCH, eval_rng)) for _ in range(16)]
    if release_gate(model, runner, eval_batches):
        print("GATE PASSED: package promoted")
        return 0
    print("GATE FAILED: package not promoted")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
