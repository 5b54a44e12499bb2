"""Nightly perf-budget check for the char-level LM trainer.

Trains a few warm-up steps, then profiles N steps with torch.profiler and
reports how the forward time splits across the model sections (embed /
attn / mlp / head). CI fails if attention takes more than ATTN_BUDGET of the
forward time, or if a section is missing from the report.
"""
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(0)
torch.set_num_threads(1)

VOCAB = 96
D_MODEL = 128
N_HEAD = 4
N_LAYER = 3
SEQ = 64
BATCH = 8
WARMUP_STEPS = 3
PROFILE_STEPS = 4
ATTN_BUDGET = 0.60
SECTIONS = ("embed", "attn", "mlp", "head")
USE_COMPILE = os.environ.get("USE_COMPILE", "1") == "1"


class CausalSelfAttention(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, t, self.n_head, d // self.n_head).transpose(1, 2)
        k = k.view(b, t, self.n_head, d // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, d // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.n_head)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d, n_head):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        with record_function("attn"):
            x = x + self.attn(self.ln1(x))
        with record_function("mlp"):
            x = x + self.mlp(self.ln2(x))
        return x


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(SEQ, D_MODEL)
        self.blocks = nn.ModuleList([Block(D_MODEL, N_HEAD) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, idx):
        with record_function("embed"):
            pos = torch.arange(idx.shape[1], device=idx.device)
            x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        with record_function("head"):
            logits = self.head(self.ln_f(x))
        return logits


def get_batch(gen):
    data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=gen)
    return data[:, :-1], data[:, 1:]


def train_step(model, opt, x, y):
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


def section_report(prof):
    totals = {}
    for evt in prof.key_averages():
        if evt.key in SECTIONS:
            totals[evt.key] = evt.cpu_time_total / 1000.0
    return totals


def main():
    gen = torch.Generator().manual_seed(1234)
    model = CharLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    runner = torch.compile(model) if USE_COMPILE else model
    print(f"torch {torch.__version__}  compile={USE_COMPILE}")

    t0 = time.perf_counter()
    for step in range(WARMUP_STEPS):
        x, y = get_batch(gen)
        loss = train_step(runner, opt, x, y)
    print(f"warm-up done in {time.perf_counter() - t0:.1f}s, loss {loss:.3f}")

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for step in range(PROFILE_STEPS):
            x, y = get_batch(gen)
            loss = train_step(runner, opt, x, y)
    print(f"profiled {PROFILE_STEPS} steps, loss {loss:.3f}")

    totals = section_report(prof)
    fwd_total = sum(totals.values())
    print("section      ms     share")
    for name in SECTIONS:
        ms = totals[name]
        print(f"{name:8s} {ms:8.1f}  {ms / fwd_total:6.1%}")

    attn_share = totals["attn"] / fwd_total
    if attn_share > ATTN_BUDGET:
        print(f"FAIL: attention uses {attn_share:.1%} of forward time (budget {ATTN_BUDGET:.0%})")
        return 1
    print("PASS: perf budget OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
