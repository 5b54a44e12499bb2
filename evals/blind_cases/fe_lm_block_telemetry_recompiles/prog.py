"""Char-level LM pretraining smoke run with per-block regional torch.compile.

We compile each TransformerBlock separately (regional compilation) so the compile
cost is paid once for the repeated block instead of for the whole model.
Activation telemetry (per-block residual RMS) is collected every step and written
to the run log so we can spot blow-ups early.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------- telemetry
# Filled in by the blocks during the forward pass; flushed by the trainer.
_ACT_STATS = {}


def reset_telemetry():
    global _ACT_STATS
    _ACT_STATS = {}


def record_activation(name, t):
    _ACT_STATS[name] = t.detach().float().pow(2).mean().sqrt()


def telemetry_snapshot():
    return {k: float(v) for k, v in _ACT_STATS.items()}


# ---------------------------------------------------------------- model
class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        k = k.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        v = v.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class TransformerBlock(nn.Module):
    def __init__(self, name, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.name = name
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        record_activation(self.name, x)
        return x


class CharLM(nn.Module):
    def __init__(self, vocab, d_model=96, n_heads=4, n_layers=12, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(
            [TransformerBlock(f"block{i:02d}", d_model, n_heads) for i in range(n_layers)]
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        reset_telemetry()
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


# ---------------------------------------------------------------- data
def make_corpus(n_chars, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    # cheap synthetic "text": a noisy order-2 Markov chain over the vocab
    trans = torch.softmax(torch.randn(vocab, vocab, generator=g) * 3.0, dim=-1)
    out = torch.empty(n_chars, dtype=torch.long)
    out[0] = 0
    for i in range(1, n_chars):
        out[i] = torch.multinomial(trans[out[i - 1]], 1, generator=g)
    return out


def get_batch(data, batch_size, seq_len, g):
    ix = torch.randint(0, len(data) - seq_len - 1, (batch_size,), generator=g)
    x = torch.stack([data[i : i + seq_len] for i in ix])
    y = torch.stack([data[i + 1 : i + seq_len + 1] for i in ix])
    return x, y


# ---------------------------------------------------------------- training
def train(model, data, steps, batch_size, seq_len, log_every, tag):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(1234)
    model.train()
    step_times = []
    telemetry_log = []
    for step in range(steps):
        x, y = get_batch(data, batch_size, seq_len, g)
        t0 = time.perf_counter()
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - t0)
        telemetry_log.append(telemetry_snapshot())
        if step % log_every == 0 or step == steps - 1:
            rms = telemetry_log[-1]
            print(
                f"[{tag}] step {step:3d} loss {loss.item():.4f} "
                f"rms(first/last) {rms['block00']:.3f}/{rms[max(rms)]:.3f} "
                f"step {step_times[-1] * 1000:.1f} ms"
            )
    return step_times, telemetry_log


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--layers", type=int, default=12)
    args = p.parse_args()

    torch.manual_seed(0)
    vocab = 64
    data = make_corpus(20_000, vocab)

    # eager reference
    torch.manual_seed(0)
    eager_model = CharLM(vocab, n_layers=args.layers)
    eager_times, _ = train(eager_model, data, args.steps, args.batch_size, args.seq_len, 10, "eager")

    # regional compile: one compiled block, reused for every layer
    torch.manual_seed(0)
    model = CharLM(vocab, n_layers=args.layers)
    t0 = time.perf_counter()
    for blk in model.blocks:
        blk.compile()
    comp_times, tel = train(model, data, args.steps, args.batch_size, args.seq_len, 10, "compiled")
    total = time.perf_counter() - t0

    warm = slice(5, None)
    e_ms = 1000 * sum(eager_times[warm]) / len(eager_times[warm])
    c_ms = 1000 * sum(comp_times[warm]) / len(comp_times[warm])
    print(f"first compiled step: {comp_times[0]:.1f} s (total compiled run {total:.1f} s)")
    print(f"steady-state step: eager {e_ms:.1f} ms | compiled {c_ms:.1f} ms | speedup {e_ms / c_ms:.2f}x")
    print(f"telemetry keys per step: {len(tel[-1])}")


if __name__ == "__main__":
    main()
