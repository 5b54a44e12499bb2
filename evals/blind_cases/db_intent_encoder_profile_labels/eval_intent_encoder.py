"""Offline eval / latency benchmark for the intent encoder.

Batches are padded to the longest utterance in the batch (dynamic padding), so
the sequence length changes from batch to batch. The model is compiled with
dynamic=True so one graph should serve every length.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

logger = logging.getLogger("intent_eval")


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x, key_padding_mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        attn_mask = key_padding_mask[:, None, None, :]  # True = keep
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.dropout if self.training else 0.0
        )
        out = out.transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


class EncoderBlock(nn.Module):
    def __init__(self, idx, d_model, n_heads, ffn_mult=4, dropout=0.1):
        super().__init__()
        self.idx = idx
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, ffn_mult * d_model),
            nn.GELU(),
            nn.Linear(ffn_mult * d_model, d_model),
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_padding_mask):
        T = x.shape[1]
        with record_function(f"block{self.idx}.attn[T={T}]"):
            x = x + self.drop(self.attn(self.ln1(x), key_padding_mask))
        with record_function(f"block{self.idx}.ffn[T={T}]"):
            x = x + self.drop(self.ffn(self.ln2(x)))
        return x


class IntentEncoder(nn.Module):
    def __init__(self, vocab_size, n_intents, d_model=128, n_heads=4, n_layers=2, max_len=256):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList([EncoderBlock(i, d_model, n_heads) for i in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_intents)

    def forward(self, input_ids, attention_mask):
        T = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos[:, :T]
        keep = attention_mask.bool()
        for blk in self.blocks:
            x = blk(x, keep)
        x = self.ln_f(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def make_eval_batches(n_batches, batch_size, min_len, max_len, vocab_size, n_intents, seed):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        lens = torch.randint(min_len, max_len + 1, (batch_size,), generator=g)
        T = int(lens.max())
        ids = torch.zeros(batch_size, T, dtype=torch.long)
        mask = torch.zeros(batch_size, T, dtype=torch.long)
        for i, L in enumerate(lens.tolist()):
            ids[i, :L] = torch.randint(1, vocab_size, (L,), generator=g)
            mask[i, :L] = 1
        labels = torch.randint(0, n_intents, (batch_size,), generator=g)
        batches.append((ids, mask, labels))
    return batches


@torch.no_grad()
def evaluate(model, batches, log_every):
    correct, total = 0, 0
    latencies = []
    for step, (ids, mask, labels) in enumerate(batches):
        t0 = time.perf_counter()
        logits = model(ids, mask)
        dt = time.perf_counter() - t0
        latencies.append(dt)
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
        if step % log_every == 0:
            logger.info("batch %3d  T=%3d  %.1f ms", step, ids.shape[1], dt * 1e3)
    return correct / total, latencies


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--min-len", type=int, default=8)
    p.add_argument("--max-len", type=int, default=64)
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--intents", type=int, default=24)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--trace", default=None, help="write a chrome trace of the eval loop here")
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    torch.manual_seed(args.seed)
    model = IntentEncoder(args.vocab, args.intents).eval()
    batches = make_eval_batches(
        args.batches, args.batch_size, args.min_len, args.max_len, args.vocab, args.intents, args.seed
    )
    n_lengths = len({b[0].shape[1] for b in batches})
    logger.info("%d eval batches, %d distinct padded lengths", len(batches), n_lengths)

    if not args.no_compile:
        model = torch.compile(model, dynamic=True)

    t_start = time.perf_counter()
    if args.trace:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            acc, lat = evaluate(model, batches, args.log_every)
        prof.export_chrome_trace(args.trace)
    else:
        acc, lat = evaluate(model, batches, args.log_every)
    wall = time.perf_counter() - t_start

    tail = sorted(lat[len(lat) // 2:])
    p50 = tail[len(tail) // 2] * 1e3
    p90 = tail[min(len(tail) - 1, math.ceil(0.9 * len(tail)) - 1)] * 1e3
    logger.info("accuracy %.4f (random-init sanity run)", acc)
    logger.info("first batch %.2f s | second half p50 %.1f ms p90 %.1f ms | total %.1f s",
                lat[0], p50, p90, wall)


if __name__ == "__main__":
    main()
