"""Batch sampling benchmark for TinyLM (eager vs torch.compile).

usage: python sample.py [--compile] [--dynamic] [--new-tokens N] [--batch B] [--rounds R]
"""
import argparse
import logging
import time

import torch

from model import LMConfig, TinyLM

log = logging.getLogger("sample")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--dynamic", action="store_true", help="pass dynamic=True to torch.compile")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=50)
    p.add_argument("--seed", type=int, default=1234)
    return p.parse_args()


def sample_next(logits, temperature, top_k, gen):
    logits = logits[:, -1, :] / temperature
    v, _ = torch.topk(logits, top_k)
    logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=gen)


@torch.inference_mode()
def generate(model, step_fn, prompts, new_tokens, temperature, top_k, gen):
    B, T = prompts.shape
    model.reset_cache(B)
    pos = torch.arange(T).unsqueeze(0).expand(B, T)
    logits = step_fn(prompts, pos)
    out = [prompts]
    tok = sample_next(logits, temperature, top_k, gen)
    step_times = []
    for i in range(new_tokens):
        out.append(tok)
        pos = torch.full((B, 1), T + i, dtype=torch.long)
        t0 = time.perf_counter()
        logits = step_fn(tok, pos)
        step_times.append(time.perf_counter() - t0)
        tok = sample_next(logits, temperature, top_k, gen)
    return torch.cat(out, dim=1), step_times


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    cfg = LMConfig()
    model = TinyLM(cfg).eval()
    log.info("TinyLM: %.2fM params, %d layers, d_model=%d", model.num_params() / 1e6, cfg.n_layers, cfg.d_model)

    step_fn = model
    if args.compile:
        kwargs = {"dynamic": True} if args.dynamic else {}
        step_fn = torch.compile(model, **kwargs)
        log.info("compiled model with %s", kwargs or "default options")

    gen = torch.Generator().manual_seed(args.seed)
    prompts = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen)

    for r in range(args.rounds):
        t0 = time.perf_counter()
        seqs, step_times = generate(model, step_fn, prompts, args.new_tokens, args.temperature, args.top_k, gen)
        total = time.perf_counter() - t0
        steady = sorted(step_times)[len(step_times) // 2]
        log.info(
            "round %d: %.2fs total, median decode step %.2f ms, %.0f tok/s (batch %d, %d new tokens), out %s",
            r, total, steady * 1e3, args.batch * args.new_tokens / total, args.batch, args.new_tokens,
            tuple(seqs.shape),
        )


if __name__ == "__main__":
    main()
