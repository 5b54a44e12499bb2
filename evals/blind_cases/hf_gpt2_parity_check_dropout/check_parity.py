"""Pre-deployment parity check: compiled GPT-2 LM must match eager before we ship it.

Loads the model (here: a small random-init GPT-2 with our production config shape),
runs a fixed evaluation batch through eager and through torch.compile and compares
logits and per-token loss.

    python check_parity.py --batches 4
"""
import argparse
import logging
import math

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

log = logging.getLogger("parity")


def build_model(seed: int) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    cfg = GPT2Config(vocab_size=1000, n_positions=128, n_embd=64, n_layer=2, n_head=2)
    return GPT2LMHeadModel(cfg)


def eval_batches(n, bsz, seqlen, vocab, seed=123):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (bsz, seqlen), generator=g) for _ in range(n)]


@torch.no_grad()          # inference only -> no autograd state, no dropout(?)
def run(model_fn, batches, seed):
    torch.manual_seed(seed)   # same seed for both runs so everything is reproducible
    logits, nll = [], []
    for ids in batches:
        out = model_fn(input_ids=ids)
        lg = out.logits[:, :-1]
        logits.append(lg)
        nll.append(F.cross_entropy(lg.reshape(-1, lg.shape[-1]), ids[:, 1:].reshape(-1)))
    return torch.cat(logits), torch.stack(nll).mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--bsz", type=int, default=4)
    p.add_argument("--seqlen", type=int, default=64)
    p.add_argument("--atol", type=float, default=1e-4)
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    model = build_model(seed=0)
    batches = eval_batches(args.batches, args.bsz, args.seqlen, model.config.vocab_size)

    ref_logits, ref_nll = run(model, batches, seed=0)
    compiled = torch.compile(model)
    cmp_logits, cmp_nll = run(compiled, batches, seed=0)

    diff = (ref_logits - cmp_logits).abs()
    log.info("eager    ppl=%.4f", math.exp(ref_nll))
    log.info("compiled ppl=%.4f", math.exp(cmp_nll))
    log.info("logits max|diff|=%.3e mean|diff|=%.3e", diff.max().item(), diff.mean().item())
    ok = torch.allclose(ref_logits, cmp_logits, atol=args.atol, rtol=args.rtol)
    log.info("PARITY %s (atol=%g rtol=%g)", "OK" if ok else "FAILED", args.atol, args.rtol)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
