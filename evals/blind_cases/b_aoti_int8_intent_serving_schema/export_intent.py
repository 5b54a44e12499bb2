"""Train the intent model, quantize to int8 weights and package it with AOTInductor.

python export_intent.py  ->  artifacts/intent_w8.pt2 + artifacts/golden.pt
"""
import os
import random

import torch
import torch.nn.functional as F

from intent_model import IntentClassifier, quantize_
from text_features import INTENTS, encode_batch

TEMPLATES = {
    "check_balance": ["what is my balance", "how much money is in my {acct}", "show {acct} balance"],
    "transfer_money": ["send {amt} to {who}", "transfer {amt} from {acct} to {who}", "move money to {who}"],
    "card_lost": ["i lost my card", "my {card} card was stolen", "block my {card} card"],
    "open_account": ["open a new {acct}", "i want to open an account", "start a {acct} for me"],
    "close_account": ["close my {acct}", "i want to cancel my account", "shut down my {acct}"],
    "loan_rates": ["what are your loan rates", "interest rate for a {loan} loan", "how much is a {loan} loan"],
    "branch_hours": ["when does the branch open", "branch hours on {day}", "are you open on {day}"],
    "dispute_charge": ["i don't recognize this charge", "dispute a charge of {amt}", "wrong charge on my {card} card"],
}
FILL = {
    "acct": ["checking account", "savings account", "joint account"],
    "amt": ["50 dollars", "1200", "twenty bucks"],
    "who": ["my mom", "john", "my landlord"],
    "card": ["debit", "credit", "visa"],
    "loan": ["car", "home", "student"],
    "day": ["saturday", "sunday", "monday"],
}


def sample(rng, n):
    texts, labels = [], []
    for _ in range(n):
        y = rng.randrange(len(INTENTS))
        t = rng.choice(TEMPLATES[INTENTS[y]])
        t = t.format(**{k: rng.choice(v) for k, v in FILL.items()})
        texts.append(t)
        labels.append(y)
    return texts, torch.tensor(labels)


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    model = IntentClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for step in range(150):
        texts, y = sample(rng, 64)
        loss = F.cross_entropy(model(encode_batch(texts)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    model = quantize_(model.eval())
    val_texts, val_y = sample(random.Random(1), 256)
    with torch.no_grad():
        acc = (model(encode_batch(val_texts)).argmax(1) == val_y).float().mean().item()
    print(f"int8 model val acc {acc:.3f}")

    example = encode_batch(val_texts[:8])
    batch = torch.export.Dim("batch", min=1, max=256)
    ep = torch.export.export(model, (example,), dynamic_shapes={"token_ids": {0: batch}})

    os.makedirs("artifacts", exist_ok=True)
    path = torch._inductor.aoti_compile_and_package(ep, package_path="artifacts/intent_w8.pt2")

    # sanity check the package in this process before shipping it
    runner = torch._inductor.aoti_load_package(path)
    golden_texts = val_texts[:32]
    ids = encode_batch(golden_texts)
    with torch.no_grad():
        ref = model(ids)
    got = runner(ids)
    print(f"packaged {path}: max |aoti - eager| = {(got - ref).abs().max().item():.2e}")
    torch.save({"texts": golden_texts, "logits": ref}, "artifacts/golden.pt")


if __name__ == "__main__":
    main()
