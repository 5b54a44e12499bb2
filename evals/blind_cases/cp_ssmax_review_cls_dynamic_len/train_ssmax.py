"""Review-sentiment classifier with Scalable-Softmax (SSMax) attention.

SSMax (Nakanishi, 2025) multiplies the attention logits by s * log(n) so the
softmax does not flatten out on long inputs. Batches are bucketed by length
(no padding to a global max), so the sequence length changes every step.
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ssmax")


class SSMaxAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.0):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        # learnable per-head scaling s from the SSMax paper
        self.ssmax_s = nn.Parameter(torch.full((heads, 1, 1), 0.43))
        self.dropout = dropout

    def forward(self, x, key_padding_mask):
        B, T, D = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.heads, self.head_dim).transpose(1, 2)
        log_n = math.log(T)
        q = q * (self.ssmax_s * log_n)
        attn_mask = ~key_padding_mask[:, None, None, :]
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask,
            dropout_p=self.dropout if self.training else 0.0)
        out = out.transpose(1, 2).reshape(B, T, D)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4, dropout=0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SSMaxAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, mlp_ratio * dim), nn.GELU(),
            nn.Linear(mlp_ratio * dim, dim), nn.Dropout(dropout))

    def forward(self, x, key_padding_mask):
        x = x + self.attn(self.ln1(x), key_padding_mask)
        return x + self.mlp(self.ln2(x))


class ReviewClassifier(nn.Module):
    def __init__(self, vocab=8000, dim=128, heads=4, depth=2, max_len=512, n_cls=3):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_cls)

    def forward(self, ids):
        pad = ids == 0
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, pad)
        x = self.norm(x)
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


def make_buckets(n_batches, batch_size, vocab, seed):
    """Synthetic length-bucketed review batches (lengths 40..400 tokens)."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        T = int(torch.randint(40, 401, (1,), generator=g))
        lens = torch.randint(max(8, T // 2), T + 1, (batch_size,), generator=g)
        lens[0] = T
        ids = torch.randint(1, vocab, (batch_size, T), generator=g)
        ids[torch.arange(T)[None, :] >= lens[:, None]] = 0
        y = (ids[:, :8].sum(1) % 3)
        batches.append((ids, y))
    return batches


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(args.seed)
    model = ReviewClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step_fn = model
    if args.compile:
        # lengths vary per bucket, so ask for dynamic shapes up front
        step_fn = torch.compile(model, dynamic=True)

    batches = make_buckets(args.steps, args.batch_size, 8000, args.seed)
    model.train()
    t_start = time.perf_counter()
    for step, (ids, y) in enumerate(batches):
        t0 = time.perf_counter()
        logits = step_fn(ids)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        log.info("step %3d  len %3d  loss %.4f  %.2fs", step, ids.shape[1], loss.item(), dt)
    total = time.perf_counter() - t_start
    log.info("done: %d steps in %.1fs (%.2fs/step)", args.steps, total, total / args.steps)


if __name__ == "__main__":
    main()
