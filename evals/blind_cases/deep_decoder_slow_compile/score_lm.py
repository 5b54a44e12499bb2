"""Batch scoring (per-token log-likelihood) with our decoder-only LM.

The service restarts often (autoscaling), and every cold start spends most of its
time in torch.compile before the first batch is scored.

    python score_lm.py --depth 8 --batches 5     (prod model: depth 48)
"""
import argparse
import logging
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("score")

# Replicas run from a read-only image with an ephemeral /tmp: every process starts with an
# empty compile cache (same as our autoscaled pods).
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="inductor-cache-"))


class Block(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))
        self.n_heads = n_heads

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x))


class DecoderLM(nn.Module):
    def __init__(self, vocab=2048, d=64, depth=8, n_heads=4, max_len=256):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, n_heads) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


@torch.inference_mode()
def score(model, ids):
    logits = model(ids[:, :-1])
    lp = F.log_softmax(logits.float(), dim=-1)
    return lp.gather(-1, ids[:, 1:, None]).squeeze(-1).sum(-1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=8)
    p.add_argument("--batches", type=int, default=5)
    p.add_argument("--bsz", type=int, default=8)
    p.add_argument("--seqlen", type=int, default=128)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(0)

    model = DecoderLM(depth=args.depth).eval()
    model = torch.compile(model)

    g = torch.Generator().manual_seed(0)
    t_start = time.time()
    for i in range(args.batches):
        ids = torch.randint(0, 2048, (args.bsz, args.seqlen + 1), generator=g)
        t = time.time()
        ll = score(model, ids)
        log.info("batch %d mean ll/token %.4f  (%.2fs)", i, (ll / args.seqlen).mean().item(), time.time() - t)
        if i == 0:
            log.info("time to first result: %.1fs", time.time() - t_start)
    log.info("ppl proxy %.2f", math.exp(-(ll / args.seqlen).mean().item()))


if __name__ == "__main__":
    main()
