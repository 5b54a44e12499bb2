"""Export the candidate-reranking LM (Llama-architecture, small) with torch.export so the scoring
service can load a .pt2 without the transformers modelling code on the hot path.

  python export_scorer.py --out scorer.pt2
"""
import argparse
import logging
import os
import time

import torch
from torch.export import Dim
from transformers import LlamaConfig, LlamaForCausalLM

from scoring import make_batch, sequence_logprobs

log = logging.getLogger("export_scorer")

SCORER_CONFIG = dict(
    vocab_size=4096,
    hidden_size=128,
    intermediate_size=344,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=512,
    rope_theta=10000.0,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
    tie_word_embeddings=True,
)


def build_model(ckpt: str | None) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(**SCORER_CONFIG)
    model = LlamaForCausalLM(config)
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt, map_location="cpu")
        missing, unexpected = model.load_state_dict(state, strict=False)
        log.info("loaded %s (missing=%d unexpected=%d)", ckpt, len(missing), len(unexpected))
    else:
        log.info("no checkpoint given, exporting randomly initialised weights (smoke test)")
    return model.eval()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default=None)
    p.add_argument("--out", default="scorer.pt2")
    p.add_argument("--max-batch", type=int, default=32)
    p.add_argument("--max-len", type=int, default=256)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    model = build_model(args.ckpt)
    cfg = model.config
    gen = torch.Generator().manual_seed(0)

    example_ids, example_mask = make_batch([17, 12, 9, 17], cfg.vocab_size, cfg.pad_token_id, gen)
    batch = Dim("batch", min=1, max=args.max_batch)
    seq = Dim("seq", min=2, max=args.max_len)
    dynamic_shapes = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: seq},
    }

    t0 = time.perf_counter()
    with torch.no_grad():
        ep = torch.export.export(
            model,
            args=(),
            kwargs={"input_ids": example_ids, "attention_mask": example_mask},
            dynamic_shapes=dynamic_shapes,
        )
    log.info("exported in %.1fs", time.perf_counter() - t0)

    # Parity check of the exported program against eager on unseen batch shapes.
    runner = ep.module()
    worst = 0.0
    for lengths in ([5, 9, 31], [64] * 2, [3, 120, 77, 12, 40]):
        ids, mask = make_batch(lengths, cfg.vocab_size, cfg.pad_token_id, gen)
        with torch.no_grad():
            ref = sequence_logprobs(model(input_ids=ids, attention_mask=mask).logits, ids, mask)
            got = sequence_logprobs(runner(input_ids=ids, attention_mask=mask).logits, ids, mask)
        worst = max(worst, (ref - got).abs().max().item())
        log.info("batch %s: max |exported - eager| seq logprob = %.2e", tuple(ids.shape), (ref - got).abs().max().item())
    if worst > 1e-3:
        raise SystemExit(f"exported scorer disagrees with eager (worst {worst:.3e})")

    torch.export.save(ep, args.out)
    log.info("saved %s (%.1f MB)", args.out, os.path.getsize(args.out) / 1e6)


if __name__ == "__main__":
    main()
