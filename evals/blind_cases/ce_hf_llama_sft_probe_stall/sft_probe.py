"""Tiny Llama SFT run with periodic layer-wise probing (logit-lens style) for our dashboard.

Trains a small random-init LlamaForCausalLM on synthetic instruction/answer sequences with
torch.compile, and every --probe-every steps logs per-layer hidden-state statistics.
"""
import argparse
import logging
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

log = logging.getLogger("sft")


def build_model(args):
    cfg = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 2,
        num_hidden_layers=args.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg)


def synthetic_batch(step, args):
    """Prompt tokens followed by an 'answer' that is a deterministic function of the prompt."""
    g = torch.Generator().manual_seed(1000 + step)
    prompt = torch.randint(3, args.vocab, (args.batch, args.prompt_len), generator=g)
    answer = (prompt[:, : args.answer_len] * 7 + 11) % (args.vocab - 3) + 3
    ids = torch.cat([torch.full((args.batch, 1), 1), prompt, answer, torch.full((args.batch, 1), 2)], dim=1)
    labels = ids.clone()
    labels[:, : 1 + args.prompt_len] = -100  # loss on the answer only
    return ids, labels


@torch.no_grad()
def layer_stats(hidden_states, lm_head, labels):
    """Per-layer RMS and logit-lens loss on the answer tokens."""
    stats = []
    for h in hidden_states:
        logits = lm_head(h[:, :-1]).float()
        lens = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100)
        stats.append((h.pow(2).mean().sqrt().item(), lens.item()))
    return stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=14)
    p.add_argument("--probe-every", type=int, default=5)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--prompt-len", type=int, default=24)
    p.add_argument("--answer-len", type=int, default=8)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--no-compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    model = build_model(args)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_fn = model if args.no_compile else torch.compile(model)
    log.info("params=%.2fM compile=%s", sum(p.numel() for p in model.parameters()) / 1e6, not args.no_compile)

    times = []
    for step in range(args.steps):
        ids, labels = synthetic_batch(step, args)
        probe = step > 0 and step % args.probe_every == 0
        t0 = time.perf_counter()
        out = step_fn(input_ids=ids, labels=labels, output_hidden_states=probe)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        times.append(dt)
        log.info("step %2d loss %.4f  %.3fs%s", step, out.loss.item(), dt, "  [probe]" if probe else "")
        if probe:
            for i, (rms, lens) in enumerate(layer_stats(out.hidden_states, model.lm_head, labels)):
                log.info("    layer %d rms %.3f lens-loss %.3f", i, rms, lens)

    steady = [t for i, t in enumerate(times) if i >= 2]
    log.info("median step %.3fs, max step after warm-up %.2fs (step %d)",
             sorted(steady)[len(steady) // 2], max(steady), 2 + steady.index(max(steady)))


if __name__ == "__main__":
    main()
