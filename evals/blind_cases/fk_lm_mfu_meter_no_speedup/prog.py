"""Perf smoke test for the tiny char-LM trainer.

Trains the same model for a few steps in eager and with torch.compile and
checks that the compiled train step is meaningfully faster. Throughput and
achieved GFLOP/s are logged per step by the StepMeter so we can track MFU.
"""
import copy
import math
import statistics
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode


@dataclass
class Cfg:
    vocab: int = 96
    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    seq_len: int = 64
    batch: int = 8
    lr: float = 3e-3
    warmup_steps: int = 3
    timed_steps: int = 12
    min_speedup: float = 1.15


class Block(nn.Module):
    def __init__(self, cfg: Cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc1 = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.fc2 = nn.Linear(4 * cfg.d_model, cfg.d_model)
        mask = torch.triu(torch.ones(cfg.seq_len, cfg.seq_len, dtype=torch.bool), 1)
        self.register_buffer("causal_mask", mask, persistent=False)

    def attn(self, x):
        B, T, C = x.shape
        h = self.n_head
        q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, h, C // h).transpose(1, 2)
        k = k.view(B, T, h, C // h).transpose(1, 2)
        v = v.view(B, T, h, C // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // h)
        att = att.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x


class TinyLM(nn.Module):
    def __init__(self, cfg: Cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Parameter(torch.zeros(1, cfg.seq_len, cfg.d_model))
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def make_batches(cfg: Cfg, n: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    base = torch.randint(0, cfg.vocab, (64,), generator=g)
    out = []
    for _ in range(n):
        starts = torch.randint(0, 64, (cfg.batch,), generator=g)
        idx = torch.stack([base[(s + torch.arange(cfg.seq_len + 1)) % 64] for s in starts])
        out.append((idx[:, :-1].contiguous(), idx[:, 1:].contiguous()))
    return out


class StepMeter:
    """Per-step wall time, tokens/s and achieved GFLOP/s (for the MFU dashboard)."""

    def __init__(self, tokens_per_step: int):
        self.tokens_per_step = tokens_per_step
        self.times, self.gflops = [], []

    def step(self):
        meter = self

        class _Ctx:
            def __enter__(self):
                self.fc = FlopCounterMode(display=False)
                self.fc.__enter__()
                self.t0 = time.perf_counter()
                return self

            def __exit__(self, *exc):
                dt = time.perf_counter() - self.t0
                self.fc.__exit__(*exc)
                meter.times.append(dt)
                meter.gflops.append(self.fc.get_total_flops() / dt / 1e9)
                return False

        return _Ctx()

    def summary(self, skip: int):
        t = statistics.median(self.times[skip:])
        g = statistics.median(self.gflops[skip:])
        return t, self.tokens_per_step / t, g


def train_steps(model, step_fn, batches, cfg: Cfg, tag: str):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    meter = StepMeter(cfg.batch * cfg.seq_len)
    losses = []
    for i, (x, y) in enumerate(batches):
        with meter.step():
            loss = step_fn(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    t, tps, gf = meter.summary(skip=cfg.warmup_steps)
    print(f"[{tag}] first step {meter.times[0]*1e3:8.1f} ms | median step {t*1e3:7.2f} ms | "
          f"{tps:9.0f} tok/s | {gf:6.2f} GFLOP/s | loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    return t


def main():
    cfg = Cfg()
    torch.manual_seed(0)
    base = TinyLM(cfg)
    batches = make_batches(cfg, cfg.warmup_steps + cfg.timed_steps)

    eager_model = copy.deepcopy(base)
    t_eager = train_steps(eager_model, eager_model, batches, cfg, "eager   ")

    comp_model = copy.deepcopy(base)
    compiled = torch.compile(comp_model)
    t_comp = train_steps(comp_model, compiled, batches, cfg, "compiled")

    speedup = t_eager / t_comp
    print(f"torch {torch.__version__}: compiled speedup {speedup:.2f}x (gate: >= {cfg.min_speedup:.2f}x)")
    if speedup < cfg.min_speedup:
        raise SystemExit(f"PERF GATE FAILED: compiled train step is only {speedup:.2f}x faster than eager")
    print("PERF GATE PASSED")


if __name__ == "__main__":
    main()
