"""Release gate for the ticket-intent inference service.

Runs the production request path (tokenize -> encoder -> calibrated softmax)
once with the eager model and once with the torch.compile'd model, and fails
the release if the compiled service is not meaningfully faster at p50.
"""
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

VOCAB = 8192
D_MODEL = 64
N_HEADS = 4
N_LAYERS = 4
MAX_LEN = 32
BATCH = 4
N_INTENTS = 14
WARMUP_REQUESTS = 3
TIMED_REQUESTS = 40
MIN_SPEEDUP = 1.3

INTENTS = [
    "billing", "refund", "login", "password_reset", "shipping_delay", "damaged_item",
    "cancel_order", "upgrade_plan", "downgrade_plan", "invoice_copy", "api_error",
    "data_export", "account_delete", "other",
]


WORDS = ("my invoice refund card login password order package arrived broken cancel "
         "plan upgrade api returns 500 error export data delete account please help "
         "charged twice since yesterday still waiting tracking number").split()
VOCAB_IDS = {w: i + 2 for i, w in enumerate(WORDS)}


class PrecisionAudit(TorchFunctionMode):
    """Production guardrail: flags float64 tensor traffic (accidental upcasts
    double our CPU cost) and exposes counters to the /metrics scraper."""

    def __init__(self):
        super().__init__()
        self.ops_seen = 0
        self.fp64_ops = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops_seen += 1
        for a in args:
            if isinstance(a, torch.Tensor) and a.dtype == torch.float64:
                self.fp64_ops += 1
                break
        return func(*args, **kwargs)

    def snapshot(self):
        return {"ops_seen": int(self.ops_seen), "fp64_ops": int(self.fp64_ops)}


class SelfAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, key_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        attn_bias = torch.zeros(b, 1, 1, t, dtype=x.dtype, device=x.device)
        attn_bias = attn_bias.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, h)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, key_mask):
        x = x + self.attn(self.ln1(x), key_mask)
        return x + self.mlp(self.ln2(x))


class TicketEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(MAX_LEN, D_MODEL)
        self.blocks = nn.ModuleList(Block(D_MODEL, N_HEADS) for _ in range(N_LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, N_INTENTS)
        self.register_buffer("temperature", torch.tensor(1.7))

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            x = blk(x, mask)
        x = self.ln_f(x)
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return F.softmax(self.head(pooled) / self.temperature, dim=-1)


def tokenize(texts):
    rows, lens = [], []
    for text in texts[:BATCH]:
        words = text.lower().split()[:MAX_LEN]
        row = [VOCAB_IDS.get(w, 1) for w in words]
        lens.append(len(row))
        rows.append(row + [0] * (MAX_LEN - len(row)))
    ids = torch.tensor(rows, dtype=torch.long)
    mask = torch.arange(MAX_LEN)[None, :] < torch.tensor(lens)[:, None]
    return ids, mask


def make_requests(n, seed):
    g = torch.Generator().manual_seed(seed)
    words = WORDS
    reqs = []
    for _ in range(n):
        texts = []
        for _ in range(BATCH):
            L = int(torch.randint(6, MAX_LEN, (1,), generator=g))
            idx = torch.randint(0, len(words), (L,), generator=g)
            texts.append(" ".join(words[k] for k in idx.tolist()))
        reqs.append(texts)
    return reqs


class IntentService:
    def __init__(self, model, audit):
        self.model = model
        self.audit = audit

    @torch.inference_mode()
    def handle(self, texts):
        with self.audit:
            ids, mask = tokenize(texts)
            probs = self.model(ids, mask)
            conf, top = probs.max(dim=-1)
        return [(INTENTS[i], round(float(c), 3)) for i, c in zip(top.tolist(), conf.tolist())]


def bench(service, requests):
    for texts in requests[:WARMUP_REQUESTS]:
        service.handle(texts)
    lat = []
    for texts in requests[WARMUP_REQUESTS:]:
        t0 = time.perf_counter()
        service.handle(texts)
        lat.append((time.perf_counter() - t0) * 1e3)
    lat.sort()
    return statistics.median(lat), lat[int(0.95 * (len(lat) - 1))]


def main():
    torch.manual_seed(0)
    model = TicketEncoder().eval()
    requests = make_requests(WARMUP_REQUESTS + TIMED_REQUESTS, seed=123)

    eager_audit = PrecisionAudit()
    eager_svc = IntentService(model, eager_audit)
    e50, e95 = bench(eager_svc, requests)
    print(f"eager    p50={e50:7.2f} ms  p95={e95:7.2f} ms  audit={eager_audit.snapshot()}")

    compiled_audit = PrecisionAudit()
    compiled_svc = IntentService(torch.compile(model), compiled_audit)
    t0 = time.perf_counter()
    c50, c95 = bench(compiled_svc, requests)
    wall = time.perf_counter() - t0
    print(f"compiled p50={c50:7.2f} ms  p95={c95:7.2f} ms  audit={compiled_audit.snapshot()}  "
          f"(bench wall {wall:.1f}s incl. warm-up)")

    ref = eager_svc.handle(requests[0])
    got = compiled_svc.handle(requests[0])
    agree = sum(a[0] == b[0] for a, b in zip(ref, got)) / len(ref)
    print(f"top-1 agreement eager vs compiled: {agree:.2%}")

    speedup = e50 / c50
    print(f"p50 speedup: {speedup:.2f}x (gate: >= {MIN_SPEEDUP}x)")
    if agree < 1.0 or speedup < MIN_SPEEDUP:
        print("RELEASE GATE: FAIL")
        sys.exit(1)
    print("RELEASE GATE: PASS")


if __name__ == "__main__":
    main()
