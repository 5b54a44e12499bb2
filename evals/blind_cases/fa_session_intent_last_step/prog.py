"""Nightly session-intent scoring: does a shopping session end in a purchase?

Sessions are event sequences (item category, event type, dwell-time bucket).
Batches are bucketed by length and LEFT-padded so the most recent event is
always the last position. The encoder is a small causal transformer; the
head reads the final position.

We compile with dynamic=True because session lengths vary a lot.
"""
import math
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)

N_CATEGORIES = 500
N_EVENT_TYPES = 6
N_DWELL_BUCKETS = 16
D_MODEL = 64
N_HEADS = 4
N_LAYERS = 2
BATCH = 32
LENGTH_BUCKETS = [16, 32, 48, 64, 96]
BATCHES_PER_WINDOW = 24
WINDOWS = 3
PAD = 0


class CausalBlock(nn.Module):
    def __init__(self, d, h, p=0.1):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(p)

    def forward(self, x, attn_mask):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q = q.view(B, T, self.h, D // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, D // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, D // self.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        a = a.transpose(1, 2).reshape(B, T, D)
        x = x + self.drop(self.proj(a))
        x = x + self.drop(self.ff(self.ln2(x)))
        return x


class SessionIntentModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cat_emb = nn.Embedding(N_CATEGORIES, D_MODEL, padding_idx=PAD)
        self.evt_emb = nn.Embedding(N_EVENT_TYPES, D_MODEL)
        self.dwell_emb = nn.Embedding(N_DWELL_BUCKETS, D_MODEL)
        self.pos_emb = nn.Embedding(128, D_MODEL)
        self.blocks = nn.ModuleList(CausalBlock(D_MODEL, N_HEADS) for _ in range(N_LAYERS))
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Sequential(nn.Linear(D_MODEL, D_MODEL), nn.Tanh(), nn.Linear(D_MODEL, 1))

    def forward(self, cats, evts, dwell):
        B, T = cats.shape
        valid = cats != PAD
        # positions count from the most recent event backwards (left padding)
        pos = torch.arange(T - 1, -1, -1, device=cats.device).clamp(max=127)
        x = self.cat_emb(cats) + self.evt_emb(evts) + self.dwell_emb(dwell) + self.pos_emb(pos)
        causal = torch.ones(T, T, dtype=torch.bool, device=cats.device).tril()
        attn_mask = causal[None, None] & valid[:, None, None, :]
        # keep padded query rows attending to themselves so softmax stays finite
        attn_mask = attn_mask | torch.eye(T, dtype=torch.bool, device=cats.device)[None, None]
        for blk in self.blocks:
            x = blk(x, attn_mask)
        x = self.ln_f(x)
        last = x[:, T - 1]
        return self.head(last).squeeze(-1)


def make_batch(length):
    """One bucket of left-padded sessions; true lengths vary inside the bucket."""
    cats = torch.zeros(BATCH, length, dtype=torch.long)
    evts = torch.zeros(BATCH, length, dtype=torch.long)
    dwell = torch.zeros(BATCH, length, dtype=torch.long)
    labels = torch.zeros(BATCH)
    for i in range(BATCH):
        n = random.randint(max(2, length - 7), length)
        c = torch.randint(1, N_CATEGORIES, (n,))
        e = torch.randint(0, N_EVENT_TYPES, (n,))
        d = torch.randint(0, N_DWELL_BUCKETS, (n,))
        cats[i, length - n:] = c
        evts[i, length - n:] = e
        dwell[i, length - n:] = d
        # purchase-ish sessions: many add-to-cart (3) events and long dwell near the end
        score = (e == 3).float().mean() * 4 + (d[-3:].float().mean() / N_DWELL_BUCKETS) - 0.9
        labels[i] = float(torch.rand(()) < torch.sigmoid(score * 3))
    return cats, evts, dwell, labels


def score_window(cmodel, batches, window):
    t0 = time.perf_counter()
    probs, labels_all, stalls = [], [], 0
    with torch.no_grad():
        for i, (cats, evts, dwell, labels) in enumerate(batches):
            ts = time.perf_counter()
            p = torch.sigmoid(cmodel(cats, evts, dwell))
            dt = time.perf_counter() - ts
            if dt > 0.5:
                stalls += 1
                print(f"  window {window} batch {i:2d} len={cats.shape[1]:3d} took {dt:5.1f}s")
            probs.append(p)
            labels_all.append(labels)
    p = torch.cat(probs)
    y = torch.cat(labels_all)
    acc = ((p > 0.5).float() == y).float().mean().item()
    print(f"window {window}: {len(p)} sessions  acc {acc:.3f}  wall {time.perf_counter() - t0:5.1f}s  stalls {stalls}")


def main():
    model = SessionIntentModel()
    # quick warm fit so the scores are not pure noise
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(20):
        cats, evts, dwell, labels = make_batch(random.choice(LENGTH_BUCKETS))
        loss = F.binary_cross_entropy_with_logits(model(cats, evts, dwell), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()

    cmodel = torch.compile(model, dynamic=True)

    t_start = time.perf_counter()
    for window in range(WINDOWS):
        batches = [make_batch(random.choice(LENGTH_BUCKETS)) for _ in range(BATCHES_PER_WINDOW)]
        score_window(cmodel, batches, window)
    print(f"total scoring time {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
