"""Rerank candidate continuations by mean token log-likelihood.

Used by the answer-selection stage of our QA service: for every question we
generate N candidate answers upstream and pick the one the LM scorer likes best.
The scorer is a small Llama-style decoder; we use regional compilation (compile
each decoder block once, as in the PyTorch regional-compilation recipe) to keep
cold start low.
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
log = logging.getLogger("scorer")


def build_model(args):
    cfg = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 2,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=0,
    )
    torch.manual_seed(args.seed)
    model = LlamaForCausalLM(cfg).eval()
    return model


def compile_regions(model):
    # Compile the repeated block once; every layer reuses the same code object.
    for layer in model.model.layers:
        layer.compile()
    return model


def make_requests(args):
    g = torch.Generator().manual_seed(args.seed + 1)
    reqs = []
    for _ in range(args.num_questions):
        prompt_len = int(torch.randint(12, 24, (1,), generator=g))
        ans_len = int(torch.randint(4, 10, (1,), generator=g))
        prompt = torch.randint(1, args.vocab, (prompt_len,), generator=g)
        cands = torch.randint(1, args.vocab, (args.num_candidates, ans_len), generator=g)
        reqs.append((prompt, cands))
    return reqs


@torch.no_grad()
def score(model, prompt, cands):
    n, ans_len = cands.shape
    ids = torch.cat([prompt.expand(n, -1), cands], dim=1)
    attn = torch.ones_like(ids)
    out = model(input_ids=ids, attention_mask=attn)
    logits = out.logits[:, prompt.numel() - 1 : -1]
    logp = F.log_softmax(logits.float(), dim=-1)
    tok_logp = logp.gather(-1, cands.unsqueeze(-1)).squeeze(-1)
    return tok_logp.mean(-1)


def run(model, reqs, tag):
    picks, tokens = [], 0
    t0 = time.perf_counter()
    for prompt, cands in reqs:
        s = score(model, prompt, cands)
        picks.append(int(s.argmax()))
        tokens += cands.shape[0] * (prompt.numel() + cands.shape[1])
    dt = time.perf_counter() - t0
    log.info("%s: %d questions, %.1f tok/s, %.2fs", tag, len(reqs), tokens / dt, dt)
    return picks, dt


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--num-questions", type=int, default=12)
    p.add_argument("--num-candidates", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()

    reqs = make_requests(args)
    model = build_model(args)
    eager_picks, _ = run(model, reqs, "eager")
    if args.no_compile:
        return

    compile_regions(model)
    t0 = time.perf_counter()
    run(model, reqs[:2], "warmup")
    log.info("warmup (incl. compile) took %.1fs", time.perf_counter() - t0)
    picks, _ = run(model, reqs, "compiled")

    agree = sum(a == b for a, b in zip(picks, eager_picks))
    log.info("pick agreement with eager: %d/%d", agree, len(picks))

    from torch._dynamo.utils import counters
    log.info("dynamo frames: %s  unique graphs: %s",
             dict(counters["frames"]), counters["stats"]["unique_graphs"])


if __name__ == "__main__":
    main()
