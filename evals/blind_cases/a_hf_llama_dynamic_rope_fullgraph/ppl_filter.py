"""Perplexity-based quality filter for a pre-training corpus shard.

Scores every document with a small causal LM (long-context config with dynamic NTK RoPE so that
documents longer than the pre-training window are still scored) and keeps the documents whose
per-token NLL is below a threshold.
"""
import argparse
import math
import random
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

VOCAB = 512
PAD_ID = 0
BUCKETS = (32, 64, 128, 192, 256)


def build_model():
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=172,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,  # pre-training window
        rope_parameters={"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0},
        pad_token_id=PAD_ID,
        bos_token_id=1,
        eos_token_id=2,
        use_cache=False,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


def synthetic_shard(n_docs, seed):
    """Documents drawn from a few 'topics' (Markov chains) plus some junk documents."""
    rng = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    topics = [torch.softmax(torch.randn(VOCAB - 3, VOCAB - 3, generator=g) * 3.0, dim=-1) for _ in range(3)]
    docs = []
    for i in range(n_docs):
        length = rng.choice([24, 40, 56, 60, 90, 120, 150, 180, 240])
        if rng.random() < 0.2:
            toks = torch.randint(3, VOCAB, (length,), generator=g)
        else:
            trans = topics[rng.randrange(3)]
            toks = torch.empty(length, dtype=torch.long)
            cur = int(torch.randint(0, VOCAB - 3, (1,), generator=g))
            for t in range(length):
                toks[t] = cur + 3
                cur = int(torch.multinomial(trans[cur], 1, generator=g))
        docs.append(torch.cat([torch.tensor([1]), toks]))
    return docs


def bucketize(docs, batch_size):
    by_bucket = {}
    for idx, d in enumerate(docs):
        b = next(b for b in BUCKETS if len(d) <= b)
        by_bucket.setdefault(b, []).append(idx)
    for b in sorted(by_bucket):
        ids = by_bucket[b]
        for i in range(0, len(ids), batch_size):
            chunk = ids[i : i + batch_size]
            input_ids = torch.full((len(chunk), b), PAD_ID, dtype=torch.long)
            attn = torch.zeros((len(chunk), b), dtype=torch.long)
            for row, j in enumerate(chunk):
                input_ids[row, : len(docs[j])] = docs[j]
                attn[row, : len(docs[j])] = 1
            yield chunk, input_ids, attn


@torch.no_grad()
def score(model_fn, docs, batch_size):
    nll = {}
    for chunk, input_ids, attn in bucketize(docs, batch_size):
        logits = model_fn(input_ids=input_ids, attention_mask=attn).logits
        logp = F.log_softmax(logits[:, :-1].float(), dim=-1)
        tgt = input_ids[:, 1:]
        tok_nll = -logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
        mask = attn[:, 1:].float()
        per_doc = (tok_nll * mask).sum(1) / mask.sum(1)
        for j, v in zip(chunk, per_doc.tolist()):
            nll[j] = v
    return nll


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--docs", type=int, default=96)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threshold", type=float, default=6.25)
    args = ap.parse_args()

    model = build_model()
    docs = synthetic_shard(args.docs, seed=1234)
    model_fn = model if args.no_compile else torch.compile(model, fullgraph=True)

    t0 = time.time()
    nll = score(model_fn, docs, args.batch_size)
    first = time.time() - t0
    t0 = time.time()
    nll = score(model_fn, docs, args.batch_size)
    second = time.time() - t0

    keep = [j for j in range(len(docs)) if nll[j] < args.threshold]
    mean_nll = sum(nll.values()) / len(nll)
    print(f"mode={'eager' if args.no_compile else 'compiled'} docs={len(docs)} kept={len(keep)} "
          f"mean_nll={mean_nll:.5f} ppl={math.exp(mean_nll):.2f}")
    print(f"pass 1: {first:.1f}s   pass 2: {second:.2f}s")
    print("nll[0:4] =", [round(nll[j], 5) for j in range(4)])


if __name__ == "__main__":
    main()
