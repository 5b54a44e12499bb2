"""Offline replay of the candidate re-ranking service.

Each request carries a prompt and a variable number of candidate completions;
we score every candidate by its mean token log-likelihood under a small causal
LM and return the best one. The replay reports latency percentiles so we can
compare eager vs torch.compile before rolling the compiled path out.
"""
import argparse
import json
import logging
import math
import random
import statistics
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

log = logging.getLogger("rerank")


def build_model(cfg):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**cfg["model"], attn_implementation="sdpa"))
    return model.eval()


def replay_requests(n, vocab, seq_len, seed):
    rng = random.Random(seed)
    for rid in range(n):
        n_cands = rng.choice([1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24])
        ids = torch.randint(3, vocab, (n_cands, seq_len), generator=torch.Generator().manual_seed(rid))
        prompt_len = rng.randint(8, seq_len // 2)
        yield rid, ids, prompt_len


def size_thread_pool(batch_tokens, runtime):
    """Give small requests fewer intra-op threads so that concurrent workers on the
    same host don't oversubscribe the cores; big requests get the full pool."""
    want = math.ceil(batch_tokens / runtime["tokens_per_thread"])
    n = max(1, min(runtime["max_threads"], want))
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    return n


@torch.no_grad()
def score(model, ids, prompt_len):
    logits = model(input_ids=ids).logits[:, :-1]
    logp = F.log_softmax(logits.float(), dim=-1)
    tok_lp = logp.gather(-1, ids[:, 1:, None]).squeeze(-1)
    return tok_lp[:, prompt_len - 1 :].mean(dim=-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="scorer_config.json")
    p.add_argument("--requests", type=int, default=60)
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    with open(args.config) as f:
        cfg = json.load(f)
    runtime = cfg["runtime"]
    model = build_model(cfg)
    runner = torch.compile(model) if args.compile else model
    log.info("model params=%.2fM compile=%s", sum(p.numel() for p in model.parameters()) / 1e6, args.compile)

    lat_ms, threads_used, picks = [], [], []
    t_start = time.perf_counter()
    for rid, ids, prompt_len in replay_requests(
        args.requests, cfg["model"]["vocab_size"], runtime["seq_len"], args.seed
    ):
        n_threads = size_thread_pool(ids.numel(), runtime)
        t0 = time.perf_counter()
        scores = score(runner, ids, prompt_len)
        dt = (time.perf_counter() - t0) * 1e3
        lat_ms.append(dt)
        threads_used.append(n_threads)
        picks.append(int(scores.argmax()))
        if rid % 10 == 0:
            log.info("req %d cands=%d threads=%d best=%d latency=%.1fms",
                     rid, ids.shape[0], n_threads, picks[-1], dt)

    steady = lat_ms[len(lat_ms) // 2 :]
    log.info("replayed %d requests in %.1fs", len(lat_ms), time.perf_counter() - t_start)
    log.info("thread pool sizes seen: %s", sorted(set(threads_used)))
    log.info("latency ms: p50=%.1f p90=%.1f max=%.1f (second half p50=%.1f)",
             statistics.median(lat_ms), sorted(lat_ms)[int(0.9 * len(lat_ms))], max(lat_ms),
             statistics.median(steady))


if __name__ == "__main__":
    main()
