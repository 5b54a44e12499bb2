"""Masked-LM pretraining of a small protein-sequence encoder on packed batches.

Sequences of different lengths are packed into one fixed token budget per step
(no padding tokens), and attention is restricted to each sequence with a
varlen attention kernel driven by cumulative sequence lengths (cu_seqlens),
same interface as flash_attn_varlen_func. On CPU we use our own reference
kernel with a recompute-in-backward autograd.Function so activation memory
stays O(T * d) instead of O(H * T^2).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("packed_mlm")

VOCAB = 25          # 20 amino acids + X, pad, cls, eos, mask
MASK_ID = 24
IGNORE = -100


# --------------------------------------------------------------------------- #
# varlen attention
# --------------------------------------------------------------------------- #
def _segment_ids(cu_seqlens, total):
    pos = torch.arange(total, device=cu_seqlens.device)
    return torch.bucketize(pos, cu_seqlens[1:].to(torch.int64), right=True)


def _varlen_scores(q, k, cu_seqlens_q, cu_seqlens_k, scale):
    # q: (Tq, H, D), k: (Tk, H, D) -> (H, Tq, Tk) with cross-sequence entries masked
    seg_q = _segment_ids(cu_seqlens_q, q.shape[0])
    seg_k = _segment_ids(cu_seqlens_k, k.shape[0])
    allowed = seg_q[:, None] == seg_k[None, :]
    s = torch.einsum("qhd,khd->hqk", q, k) * scale
    return s.masked_fill(~allowed, float("-inf"))


class VarlenAttnFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale):
        p = torch.softmax(_varlen_scores(q, k, cu_seqlens_q, cu_seqlens_k, scale), dim=-1)
        out = torch.einsum("hqk,khd->qhd", p, v)
        ctx.save_for_backward(q, k, v, cu_seqlens_q, cu_seqlens_k)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, cu_seqlens_q, cu_seqlens_k = ctx.saved_tensors
        p = torch.softmax(_varlen_scores(q, k, cu_seqlens_q, cu_seqlens_k, ctx.scale), dim=-1)
        dv = torch.einsum("hqk,qhd->khd", p, dout)
        dp = torch.einsum("qhd,khd->hqk", dout, v)
        ds = p * (dp - (dp * p).sum(-1, keepdim=True))
        dq = torch.einsum("hqk,khd->qhd", ds, k) * ctx.scale
        dk = torch.einsum("hqk,qhd->khd", ds, q) * ctx.scale
        return dq, dk, dv, None, None, None, None, None


def varlen_attention(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
    scale = 1.0 / math.sqrt(q.shape[-1])
    return VarlenAttnFunc.apply(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                max_seqlen_q, max_seqlen_k, scale)


# --------------------------------------------------------------------------- #
# model
# --------------------------------------------------------------------------- #
class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, cu_seqlens, max_seqlen):
        T = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(T, 3, self.n_heads, self.head_dim).unbind(1)
        a = varlen_attention(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen)
        x = x + self.drop(self.proj(a.reshape(T, -1)))
        x = x + self.drop(self.ff(self.norm2(x)))
        return x


class PackedEncoderMLM(nn.Module):
    def __init__(self, d_model=128, n_heads=4, n_layers=4, d_ff=512, max_pos=1024, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model)
        self.pos = nn.Embedding(max_pos, d_model)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, dropout) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, VOCAB)

    def forward(self, tokens, position_ids, cu_seqlens, max_seqlen):
        x = self.tok(tokens) + self.pos(position_ids)
        for layer in self.layers:
            x = layer(x, cu_seqlens, max_seqlen)
        return self.head(self.norm(x))


# --------------------------------------------------------------------------- #
# data: synthetic protein-like sequences packed into a fixed token budget
# --------------------------------------------------------------------------- #
def make_pack(gen, budget, max_seqs, min_len=24, max_len=200):
    lens = []
    while sum(lens) < budget and len(lens) < max_seqs - 1:
        lens.append(int(torch.randint(min_len, max_len, (1,), generator=gen)))
    lens[-1] -= sum(lens) - budget
    if lens[-1] <= 0:
        lens.pop()
        lens.append(budget - sum(lens))
    tokens = torch.randint(0, 21, (budget,), generator=gen)
    position_ids = torch.cat([torch.arange(n) for n in lens])
    cu = torch.zeros(max_seqs + 1, dtype=torch.int32)
    cu[1:len(lens) + 1] = torch.tensor(lens).cumsum(0).to(torch.int32)
    cu[len(lens) + 1:] = budget          # pad to a fixed length so shapes stay static
    labels = torch.full_like(tokens, IGNORE)
    sel = torch.rand(budget, generator=gen) < 0.15
    labels[sel] = tokens[sel]
    inputs = tokens.clone()
    inputs[sel] = MASK_ID
    return inputs, position_ids, cu, labels, max_len


def train(model, step_fn_model, args, tag):
    gen = torch.Generator().manual_seed(args.seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    times, losses = [], []
    for step in range(args.steps):
        inputs, pos, cu, labels, max_len = make_pack(gen, args.tokens, args.max_seqs)
        t0 = time.perf_counter()
        logits = step_fn_model(inputs, pos, cu, max_len)
        loss = F.cross_entropy(logits, labels, ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        times.append(dt)
        losses.append(loss.item())
        if step % args.log_every == 0 or step == args.steps - 1:
            log.info("[%s] step %3d  loss %.4f  %.1f ms", tag, step, loss.item(), dt * 1e3)
    steady = times[args.warmup:]
    return sum(steady) / len(steady), losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=16)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--max-seqs", type=int, default=16)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=5)
    p.add_argument("--mode", choices=["eager", "compile", "both"], default="both")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.set_num_threads(1)

    results = {}
    for mode in (["eager", "compile"] if args.mode == "both" else [args.mode]):
        torch.manual_seed(args.seed)
        model = PackedEncoderMLM(n_layers=args.layers)
        model.train()
        fn = torch.compile(model) if mode == "compile" else model
        ms, losses = train(model, fn, args, mode)
        results[mode] = (ms, losses)
        log.info("[%s] steady-state step time %.1f ms (steps %d..%d)", mode, ms * 1e3, args.warmup, args.steps - 1)

    if len(results) == 2:
        e, c = results["eager"][0], results["compile"][0]
        log.info("speedup compile vs eager: %.2fx", e / c)
        log.info("final loss eager %.4f  compile %.4f", results["eager"][1][-1], results["compile"][1][-1])


if __name__ == "__main__":
    main()
