"""Ticket-topic classifier: small pre-LN transformer encoder with QK-norm.

Trains for a few steps in eager and with torch.compile and reports the
per-step wall time of both, so we can decide whether to turn compile on
in the nightly fine-tuning job (fullgraph=True: the job must run as one graph).
"""
import math
import time
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 4000
MAX_LEN = 128
N_CLASSES = 12


def qk_norm(t: torch.Tensor) -> torch.Tensor:
    # per-head normalisation of queries / keys (stabilises attention logits)
    return nn.LayerNorm(t.shape[-1], eps=1e-6, device=t.device, dtype=t.dtype)(t)


class Attention(nn.Module):
    def __init__(self, dim: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        assert dim % n_heads == 0
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, key_padding: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        q = qk_norm(q)
        k = qk_norm(k)
        mask = key_padding[:, None, None, :]  # True = attend
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )
        out = out.transpose(1, 2).reshape(B, T, C)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim: int, n_heads: int, mlp_ratio: int = 4, dropout: float = 0.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, n_heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, mlp_ratio * dim),
            nn.GELU(),
            nn.Linear(mlp_ratio * dim, dim),
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_padding):
        x = x + self.drop(self.attn(self.ln1(x), key_padding))
        x = x + self.drop(self.mlp(self.ln2(x)))
        return x


class TicketClassifier(nn.Module):
    def __init__(self, dim=128, depth=3, n_heads=4):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, MAX_LEN, dim))
        nn.init.trunc_normal_(self.pos, std=0.02)
        self.blocks = nn.ModuleList([Block(dim, n_heads) for _ in range(depth)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, N_CLASSES)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        key_padding = ids != 0
        x = self.tok(ids) + self.pos[:, : ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, key_padding)
        x = self.ln_f(x)
        m = key_padding.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def make_batches(n_batches, batch_size, seq_len, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        ids = torch.randint(1, VOCAB, (batch_size, seq_len), generator=g)
        lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,), generator=g)
        ids[torch.arange(seq_len)[None, :] >= lengths[:, None]] = 0
        labels = torch.randint(0, N_CLASSES, (batch_size,), generator=g)
        batches.append((ids, labels))
    return batches


def train(model, batches, steps, lr=3e-4, warmup=3):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    model.train()
    times, losses = [], []
    for step in range(steps):
        ids, labels = batches[step % len(batches)]
        t0 = time.perf_counter()
        logits = model(ids)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step == 0:
            first = dt
        elif step >= warmup:
            times.append(dt)
        losses.append(loss.item())
    return first, sum(times) / len(times), losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=64)
    args = p.parse_args()

    torch.manual_seed(0)
    batches = make_batches(8, args.batch_size, args.seq_len)

    torch.manual_seed(0)
    eager_model = TicketClassifier()
    state = {k: v.clone() for k, v in eager_model.state_dict().items()}
    e_first, e_step, e_losses = train(eager_model, batches, args.steps)

    torch.manual_seed(0)
    model = TicketClassifier()
    model.load_state_dict(state)
    compiled = torch.compile(model, fullgraph=True)
    c_first, c_step, c_losses = train(compiled, batches, args.steps)

    n_params = sum(p.numel() for p in model.parameters())
    print(f"params: {n_params/1e6:.2f}M  torch {torch.__version__}")
    print(f"eager    : first step {e_first*1e3:8.1f} ms | steady step {e_step*1e3:7.1f} ms | final loss {e_losses[-1]:.4f}")
    print(f"compiled : first step {c_first*1e3:8.1f} ms | steady step {c_step*1e3:7.1f} ms | final loss {c_losses[-1]:.4f}")
    print(f"speedup (steady): {e_step / c_step:.2f}x")
    max_diff = max(abs(a - b) for a, b in zip(e_losses, c_losses))
    print(f"max |loss diff| eager vs compiled: {max_diff:.2e}")


if __name__ == "__main__":
    main()
