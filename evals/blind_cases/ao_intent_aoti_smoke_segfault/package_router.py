"""Fine-tune the intent router briefly, export it and build the AOTInductor package
that the serving fleet loads, then run the pre-upload smoke test on the package."""
import argparse
import json
import logging
import os
import random
import time

import torch
import torch.nn.functional as F

from intent_model import INTENTS, HashTokenizer, IntentRouter

log = logging.getLogger("package_router")

TEMPLATES = {
    "balance": ["what is my balance", "how much money do i have in {acct}", "show {acct} balance"],
    "transfer": ["send {amt} to {name}", "transfer {amt} from {acct} to savings", "wire {amt} to {name}"],
    "card_lost": ["i lost my card", "my {card} card was stolen", "block my {card} card"],
    "dispute": ["i want to dispute a charge of {amt}", "this {amt} charge is wrong", "refund the {amt} payment"],
    "loan_info": ["what is the rate on a {loan} loan", "can i get a {loan} loan", "{loan} loan options"],
    "fraud_report": ["someone used my {card} card", "report fraud on {acct}", "unknown charge of {amt}"],
    "address_change": ["update my address", "i moved to {city}", "change mailing address to {city}"],
    "statement": ["send my {acct} statement", "download last month statement", "statement for {acct}"],
    "pin_reset": ["reset my pin", "forgot the pin for my {card} card", "change {card} card pin"],
    "other": ["hello", "talk to a human", "what are your opening hours in {city}"],
}
FILL = {"acct": ["checking", "savings", "joint account"], "amt": ["$20", "$150", "300 dollars"],
        "name": ["alice", "bob", "my landlord"], "card": ["debit", "credit", "visa"],
        "loan": ["car", "home", "student"], "city": ["denver", "austin", "boston"]}


def synth(n, rng):
    texts, labels = [], []
    for _ in range(n):
        y = rng.randrange(len(INTENTS))
        t = rng.choice(TEMPLATES[INTENTS[y]])
        for k, v in FILL.items():
            t = t.replace("{" + k + "}", rng.choice(v))
        texts.append(t)
        labels.append(y)
    return texts, torch.tensor(labels)


def finetune(model, tok, steps, rng):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    model.train()
    for step in range(1, steps + 1):
        texts, y = synth(32, rng)
        ids, mask = tok.encode(texts)
        probs = model(ids, mask)
        loss = F.nll_loss(torch.log(probs + 1e-9), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == 1:
            log.info("step %d loss %.4f", step, loss.item())
    model.eval()
    return model


def build_package(model, tok, cfg, out_path):
    ids, mask = tok.encode(["what is my balance", "send $20 to bob", "hello", "reset my pin"])
    batch = torch.export.Dim("batch", min=1, max=cfg["max_batch"])
    t0 = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(model, (ids, mask), dynamic_shapes=({0: batch}, {0: batch}))
    log.info("exported in %.1fs", time.perf_counter() - t0)
    t0 = time.perf_counter()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=out_path,
                                                   inductor_configs=cfg["inductor_configs"])
    log.info("packaged %s (%.1f MB) in %.1fs", path, os.path.getsize(path) / 2**20, time.perf_counter() - t0)
    return path


def smoke_test(path, model, tok, cfg, rng):
    runner = torch._inductor.aoti_load_package(path)
    log.info("loaded package %s", path)
    worst = 0.0
    for bs in cfg["smoke_test"]["batches"]:
        texts, _ = synth(bs, rng)
        ids, mask = tok.encode(texts)
        with torch.no_grad():
            ref = model(ids, mask)
        got = runner(ids, mask)
        diff = (got - ref).abs().max().item()
        worst = max(worst, diff)
        log.info("batch %2d  max|pkg-eager| = %.2e  top1 agree = %.3f", bs, diff,
                 (got.argmax(-1) == ref.argmax(-1)).float().mean().item())
    ok = worst <= cfg["smoke_test"]["atol"]
    log.info("smoke test %s (worst %.2e)", "PASSED" if ok else "FAILED", worst)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="deploy_config.json")
    ap.add_argument("--out", default="intent_router.pt2")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    with open(args.config) as f:
        cfg = json.load(f)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    tok = HashTokenizer(max_len=cfg["max_len"])
    model = IntentRouter(max_len=cfg["max_len"])
    log.info("%s: %.2fM params, torch %s", cfg["model_name"],
             sum(p.numel() for p in model.parameters()) / 1e6, torch.__version__)
    model = finetune(model, tok, args.steps, rng)
    torch.save(model.state_dict(), cfg["model_name"] + ".ckpt")

    path = build_package(model, tok, cfg, args.out)
    if not smoke_test(path, model, tok, cfg, rng):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
