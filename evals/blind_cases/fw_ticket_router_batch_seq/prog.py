"""Ticket router inference server: batched scoring with a compiled encoder.

Loads the router model, warms up the compiled path, then replays a captured
traffic sample through eager and compiled paths and reports latency.
"""
import itertools
import math
import random
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)

VOCAB = 4096
MAX_LEN = 64
BATCH = 16
QUEUES = ["billing", "login", "shipping", "refund", "hardware", "other"]

WORDS = ("account password reset charge refund card invoice late package "
         "tracking broken screen battery login error payment shipping "
         "address cancel order replace warranty double billed locked").split()


def tokenize(text):
    ids = [1]  # [CLS]
    for w in text.lower().split():
        ids.append(2 + (hash(w) % (VOCAB - 2)))
    ids = ids[:MAX_LEN]
    return ids + [0] * (MAX_LEN - len(ids))


def fake_ticket():
    n = random.randint(5, 40)
    return " ".join(random.choice(WORDS) for _ in range(n))


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x, key_mask):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn_mask = key_mask[:, None, None, :]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class TicketRouter(nn.Module):
    def __init__(self, d=128, heads=4, layers=2, ff=384, n_queues=len(QUEUES)):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(MAX_LEN, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_queues)
        self.urgency = nn.Linear(d, 1)
        # bookkeeping for the shadow-traffic logger
        self._batch_seq = itertools.count()
        self.last_batch_id = -1
        self.last_pooled_norm = None

    def forward(self, input_ids):
        key_mask = input_ids != 0
        x = self.tok(input_ids) + self.pos[: input_ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, key_mask)
        x = self.norm(x)
        m = key_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        self.last_batch_id = next(self._batch_seq)
        self.last_pooled_norm = pooled.detach().norm(dim=-1).mean()
        logits = self.head(pooled)
        urgency = torch.sigmoid(self.urgency(pooled)).squeeze(-1)
        return logits.softmax(-1), urgency


class RouterServer:
    def __init__(self, model, compiled=True):
        self.model = model.eval()
        self.fn = torch.compile(self.model) if compiled else self.model
        self.shadow_log = []

    @torch.no_grad()
    def handle(self, texts):
        ids = torch.tensor([tokenize(t) for t in texts], dtype=torch.long)
        probs, urgency = self.fn(ids)
        self.shadow_log.append((self.model.last_batch_id, float(self.model.last_pooled_norm)))
        top = probs.argmax(-1)
        return [(QUEUES[i], float(u)) for i, u in zip(top.tolist(), urgency.tolist())], probs


def make_traffic(n_batches):
    return [[fake_ticket() for _ in range(BATCH)] for _ in range(n_batches)]


def replay(server, traffic, warmup=3):
    for batch in traffic[:warmup]:
        server.handle(batch)
    lat, outs = [], []
    for batch in traffic[warmup:]:
        t0 = time.perf_counter()
        _, probs = server.handle(batch)
        lat.append((time.perf_counter() - t0) * 1e3)
        outs.append(probs)
    return lat, outs


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(math.ceil(p / 100 * len(xs))) - 1)]


def main():
    torch.set_num_threads(1)
    model = TicketRouter()
    traffic = make_traffic(30)

    eager = RouterServer(model, compiled=False)
    t0 = time.perf_counter()
    lat_e, out_e = replay(eager, traffic)
    wall_e = time.perf_counter() - t0

    comp = RouterServer(model, compiled=True)
    t0 = time.perf_counter()
    lat_c, out_c = replay(comp, traffic)
    wall_c = time.perf_counter() - t0

    max_diff = max((a - b).abs().max().item() for a, b in zip(out_e, out_c))
    print(f"batches={len(traffic)} batch_size={BATCH} warmup=3")
    print(f"eager    p50={statistics.median(lat_e):7.2f} ms  p90={pct(lat_e, 90):8.2f} ms  "
          f"max={max(lat_e):8.2f} ms  total={wall_e:6.2f} s")
    print(f"compiled p50={statistics.median(lat_c):7.2f} ms  p90={pct(lat_c, 90):8.2f} ms  "
          f"max={max(lat_c):8.2f} ms  total={wall_c:6.2f} s")
    print(f"max |probs diff| = {max_diff:.2e}")
    print(f"steady-state speedup (p50) = {statistics.median(lat_e) / statistics.median(lat_c):.2f}x")
    slow = [i for i, l in enumerate(lat_c) if l > 10 * statistics.median(lat_e)]
    print(f"compiled requests slower than 10x eager p50 after warm-up: {len(slow)} {slow[:10]}")


if __name__ == "__main__":
    main()
