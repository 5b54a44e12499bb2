"""Nightly scoring job for the session-log anomaly classifier.

Each session is a sequence of event embeddings (hashed event ids -> embedding table).
Sessions are long, so the encoder works on fixed-size windows of events, encodes each
window with local self-attention, and pools window summaries into a session vector.

Scoring runs under torch.compile(dynamic=True) because session lengths vary a lot.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 4096
D_MODEL = 64
N_HEADS = 4
WINDOW = 32
N_CLASSES = 3
BATCH = 8
N_BATCHES = 8


class WindowBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v)
        a = a.transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        x = x + self.ff(self.norm2(x))
        return x


class SessionEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Parameter(torch.randn(WINDOW, D_MODEL) * 0.02)
        self.blocks = nn.ModuleList([WindowBlock(D_MODEL, N_HEADS) for _ in range(1)])
        self.window_gate = nn.Linear(D_MODEL, 1)
        self.head = nn.Sequential(nn.LayerNorm(D_MODEL), nn.Linear(D_MODEL, N_CLASSES))

    def encode_window(self, w):
        w = w + self.pos[: w.shape[1]]
        for blk in self.blocks:
            w = blk(w)
        return w.mean(dim=1)

    def forward(self, event_ids):
        x = self.embed(event_ids)
        summaries = [self.encode_window(w) for w in x.split(WINDOW, dim=1)]
        s = torch.stack(summaries, dim=1)
        gate = torch.softmax(self.window_gate(s).squeeze(-1), dim=1)
        session = (gate.unsqueeze(-1) * s).sum(dim=1)
        return self.head(session)


def make_sessions(n_batches, batch, seed=1):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n_batches):
        length = int(torch.randint(40, 150, (1,), generator=g))
        ids = torch.randint(0, VOCAB, (batch, length), generator=g)
        out.append(ids)
    return out


@torch.no_grad()
def score(model, batches):
    lat = []
    preds = []
    for i, ids in enumerate(batches):
        t0 = time.perf_counter()
        logits = model(ids)
        dt = time.perf_counter() - t0
        lat.append(dt)
        preds.append(logits.argmax(-1))
        print(f"batch {i:2d} len={ids.shape[1]:4d} latency={dt * 1000:8.1f} ms")
    return torch.cat(preds), lat


def main():
    model = SessionEncoder().eval()
    batches = make_sessions(N_BATCHES, BATCH)

    t0 = time.perf_counter()
    _, eager_lat = score(model, batches)
    eager_total = time.perf_counter() - t0

    compiled = torch.compile(model, dynamic=True)
    t0 = time.perf_counter()
    preds, comp_lat = score(compiled, batches)
    comp_total = time.perf_counter() - t0

    steady = sorted(comp_lat)[len(comp_lat) // 2]
    print(f"eager total   : {eager_total:6.2f} s  (median {sorted(eager_lat)[len(eager_lat)//2]*1000:.1f} ms)")
    print(f"compiled total: {comp_total:6.2f} s  (median {steady*1000:.1f} ms)")
    print(f"slow batches (>1s): {sum(1 for x in comp_lat if x > 1.0)} of {len(comp_lat)}")
    print("class histogram:", torch.bincount(preds, minlength=N_CLASSES).tolist())


if __name__ == "__main__":
    main()
