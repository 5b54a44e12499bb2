"""Offline scoring service: per-request log-likelihood with a GPT-2 style LM (Hugging Face).

Requests have arbitrary lengths; each micro-batch is padded to its longest request
(dynamic padding, like DataCollatorWithPadding). We compiled with reduce-overhead because
the model is small and the GPU is mostly waiting on kernel launches.

    python score_requests.py --mode reduce-overhead --batches 200
    python score_requests.py --mode default --batches 200
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

log = logging.getLogger("score")


def request_stream(n_batches, bsz, vocab, min_len=8, max_len=512, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        lens = torch.randint(min_len, max_len + 1, (bsz,), generator=g)
        T = int(lens.max())                               # pad to longest in batch
        ids = torch.randint(0, vocab, (bsz, T), generator=g)
        mask = (torch.arange(T)[None] < lens[:, None]).long()
        yield ids, mask


@torch.inference_mode()
def score_batch(model, ids, mask):
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
    lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return (lp * mask[:, 1:]).sum(-1) / mask[:, 1:].sum(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="reduce-overhead", choices=["default", "reduce-overhead", "eager"])
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--bsz", type=int, default=8)
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    cfg = GPT2Config(vocab_size=8192, n_positions=512, n_embd=256, n_layer=6, n_head=4)
    model = GPT2LMHeadModel(cfg).to(args.device, torch.bfloat16).eval()
    fwd = model if args.mode == "eager" else torch.compile(model, mode=args.mode)

    n_tok, t0, t_warm = 0, time.time(), None
    for i, (ids, mask) in enumerate(request_stream(args.batches, args.bsz, cfg.vocab_size)):
        ids, mask = ids.to(args.device), mask.to(args.device)
        scores = score_batch(fwd, ids, mask)
        n_tok += int(mask.sum())
        if i == 19:                                   # ignore the first 20 batches (compilation)
            torch.cuda.synchronize()
            t_warm, tok_warm = time.time(), n_tok
        if i % 50 == 0:
            log.info("batch %d T=%d mean score %.3f  mem %.0f MiB", i, ids.shape[1], scores.mean().item(),
                     torch.cuda.memory_reserved() / 2**20)
    torch.cuda.synchronize()
    dt = time.time() - t_warm
    log.info("mode=%s steady-state %.0f tokens/s (batches 20..%d), total wall %.1fs, peak reserved %.0f MiB",
             args.mode, (n_tok - tok_warm) / dt, args.batches, time.time() - t0,
             torch.cuda.max_memory_reserved() / 2**20)


if __name__ == "__main__":
    main()
