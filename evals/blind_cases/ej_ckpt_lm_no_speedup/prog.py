"""Small decoder-only LM pretraining run (byte-level) with activation checkpointing.

We checkpoint every block to fit longer contexts on the training boxes, and
compile the model for speed. This script is the throughput smoke test we run
before launching the real job: it trains a few steps eager and compiled and
reports step times.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class Config:
    vocab = 256
    d_model = 64
    n_head = 4
    n_layer = 4
    ctx = 256
    dropout = 0.0
    act_clip = 50.0
    grad_ckpt = True


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.out = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x):
        return self.out(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)
        self.act_clip = cfg.act_clip
        self.grad_ckpt = cfg.grad_ckpt

    def _block(self, x):
        x = x + self.attn(self.ln1(x))
        h = self.mlp(self.ln2(x))
        # bf16 runs blew up early in training last month; keep residual updates bounded
        if h.abs().amax() > self.act_clip:
            h = h.clamp(-self.act_clip, self.act_clip)
        return x + h

    def forward(self, x):
        if self.grad_ckpt and self.training:
            return checkpoint(self._block, x, use_reentrant=False)
        return self._block(x)


class TinyLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.ctx, cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        self.head.weight = self.tok.weight
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def forward(self, idx, targets):
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def make_corpus(n_bytes=200_000):
    g = torch.Generator().manual_seed(1)
    words = [bytes(torch.randint(97, 123, (int(l),), generator=g).tolist())
             for l in torch.randint(2, 9, (500,), generator=g)]
    order = torch.randint(0, len(words), (n_bytes // 4,), generator=g).tolist()
    text = b" ".join(words[i] for i in order)[:n_bytes]
    return torch.tensor(list(text), dtype=torch.long)


def get_batch(data, bs, ctx, g):
    ix = torch.randint(0, data.numel() - ctx - 1, (bs,), generator=g)
    x = torch.stack([data[i:i + ctx] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + ctx] for i in ix.tolist()])
    return x, y


def train(model, step_fn, data, steps, bs, label):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(123)
    times, losses = [], []
    for step in range(steps):
        x, y = get_batch(data, bs, Config.ctx, g)
        t0 = time.perf_counter()
        loss = step_fn(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    warm = sorted(times[3:])
    ms = 1000 * warm[len(warm) // 2]
    print(f"[{label}] first step {times[0]:.2f}s | median {ms:.1f} ms/step | "
          f"loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return ms


def main():
    torch.set_num_threads(1)
    cfg = Config()
    data = make_corpus()
    bs, steps = 8, 15

    torch.manual_seed(0)
    eager_model = TinyLM(cfg)
    eager_model.train()
    eager_ms = train(eager_model, eager_model, data, steps, bs, "eager")

    torch.manual_seed(0)
    model = TinyLM(cfg)
    model.train()
    # compile block by block: all blocks share one compiled graph
    for blk in model.blocks:
        blk.compile()
    comp_ms = train(model, model, data, steps, bs, "compiled")

    print(f"speedup: {eager_ms / comp_ms:.2f}x")
    if comp_ms > 0.8 * eager_ms:
        print("WARNING: torch.compile gives no meaningful speedup on this config")


if __name__ == "__main__":
    main()
