"""Small pre-LN Transformer encoder trained with a masked-token objective.

Long-context runs are memory bound on our training boxes, so each encoder block
stores the activations that autograd saves for backward in bfloat16 and restores
them to float32 in backward (--compress-activations, on by default in our configs).
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("mlm")


def _pack_bf16(t):
    if t.dtype == torch.float32 and t.numel() >= 4096:
        return (t.dtype, t.to(torch.bfloat16))
    return (None, t)


def _unpack_bf16(packed):
    dtype, t = packed
    return t if dtype is None else t.to(dtype)


class EncoderBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4, dropout=0.1, compress=False):
        super().__init__()
        self.heads = heads
        self.compress = compress
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, mlp_ratio * dim)
        self.fc2 = nn.Linear(mlp_ratio * dim, dim)
        self.drop = nn.Dropout(dropout)

    def _attn(self, x, key_padding_mask):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        mask = key_padding_mask[:, None, None, :]  # True = keep
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(out.transpose(1, 2).reshape(b, n, d))

    def _body(self, x, key_padding_mask):
        x = x + self.drop(self._attn(self.ln1(x), key_padding_mask))
        x = x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))
        return x

    def forward(self, x, key_padding_mask):
        if self.compress:
            with torch.autograd.graph.saved_tensors_hooks(_pack_bf16, _unpack_bf16):
                return self._body(x, key_padding_mask)
        return self._body(x, key_padding_mask)


class TinyEncoderMLM(nn.Module):
    def __init__(self, vocab, dim=128, depth=2, heads=4, max_len=256, compress=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(
            [EncoderBlock(dim, heads, compress=compress) for _ in range(depth)]
        )
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids, key_padding_mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x, key_padding_mask)
        return self.head(self.ln_f(x))


def make_batch(g, batch, seq, vocab, mask_id, mask_prob=0.15):
    ids = torch.randint(5, vocab, (batch, seq), generator=g)
    # copy structure: second half repeats the first half so the task is learnable
    ids[:, seq // 2:] = ids[:, : seq - seq // 2]
    lengths = torch.randint(seq // 2, seq + 1, (batch,), generator=g)
    keep = torch.arange(seq)[None, :] < lengths[:, None]
    labels = ids.clone()
    chosen = (torch.rand(batch, seq, generator=g) < mask_prob) & keep
    labels[~chosen] = -100
    inputs = ids.masked_fill(chosen, mask_id).masked_fill(~keep, 0)
    return inputs, keep, labels


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--vocab", type=int, default=2000)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--compress-activations", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--compile", choices=["none", "default", "fullgraph"], default="fullgraph")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(args.seed)
    mask_id = 1

    model = TinyEncoderMLM(args.vocab, depth=args.depth, compress=args.compress_activations)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    if args.compile == "none":
        fwd = model
    else:
        fwd = torch.compile(model, fullgraph=(args.compile == "fullgraph"))

    g = torch.Generator().manual_seed(args.seed + 1)
    times = []
    for step in range(args.steps):
        inputs, keep, labels = make_batch(g, args.batch_size, args.seq_len, args.vocab, mask_id)
        t0 = time.perf_counter()
        logits = fwd(inputs, keep)
        loss = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f (%.3f s)", step, loss.item(), times[-1])

    steady = sorted(times[5:])[len(times[5:]) // 2]
    log.info("first step %.1f s, median steady step %.1f ms (compile=%s, compress=%s)",
             times[0], steady * 1e3, args.compile, args.compress_activations)


if __name__ == "__main__":
    main()
