"""Ticket router inference service (batch worker).

Loads the intent model, compiles it, warms every length bucket up front, then
drains the request queue in micro-batches.  Run:

    python serve_router.py --requests 96
"""
import argparse
import hashlib
import logging
import random
import time
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("router")

BUCKETS = (16, 32, 64)
BATCH = 8
VOCAB = 8192
INTENTS = ["billing", "refund", "login", "password_reset", "shipping", "cancel",
           "upgrade", "bug_report", "feature_request", "invoice", "gdpr", "other"]


class IntentCNN(nn.Module):
    def __init__(self, vocab=VOCAB, dim=96, n_cls=len(INTENTS)):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.conv1 = nn.Conv1d(dim, 128, 3, padding=1)
        self.conv2 = nn.Conv1d(128, 128, 5, padding=2)
        self.norm = nn.LayerNorm(256)
        self.head = nn.Sequential(nn.Linear(256, 128), nn.GELU(), nn.Linear(128, n_cls))

    def forward(self, ids, mask):
        h = self.emb(ids).transpose(1, 2)                       # B, D, T
        h = F.gelu(self.conv1(h))
        h = F.gelu(self.conv2(h)) + h
        m = mask.unsqueeze(1)
        mx = h.masked_fill(~m, -1e4).amax(-1)
        mean = (h * m).sum(-1) / m.sum(-1).clamp_min(1)
        return self.head(self.norm(torch.cat([mx, mean], -1)))


def tokenize(text):
    return [int(hashlib.md5(w.encode()).hexdigest()[:6], 16) % (VOCAB - 1) + 1
            for w in text.lower().split()]


def bucket_for(n):
    for b in BUCKETS:
        if n <= b:
            return b
    return BUCKETS[-1]


def collate(token_lists, bucket):
    ids = torch.zeros(BATCH, bucket, dtype=torch.long)
    mask = torch.zeros(BATCH, bucket, dtype=torch.bool)
    for i, toks in enumerate(token_lists):
        toks = toks[:bucket]
        ids[i, :len(toks)] = torch.tensor(toks)
        mask[i, :len(toks)] = True
    return ids, mask


class RouterService:
    def __init__(self, model, compile_model=True):
        self.model = model.eval()
        self.fn = torch.compile(model, dynamic=False) if compile_model else model
        self.stats = defaultdict(list)

    @torch.inference_mode()
    def warmup(self):
        for b in BUCKETS:
            t0 = time.perf_counter()
            ids, mask = collate([[1] * b], b)
            self.fn(ids, mask)
            log.info("warmup bucket=%-3d %.2fs", b, time.perf_counter() - t0)

    def handle(self, texts):
        toks = [tokenize(t) for t in texts]
        b = bucket_for(max(len(t) for t in toks))
        with torch.no_grad():
            ids, mask = collate(toks, b)
            t0 = time.perf_counter()
            logits = self.fn(ids, mask)
            dt = time.perf_counter() - t0
        self.stats[b].append(dt)
        probs = logits.softmax(-1)
        return b, dt, [(INTENTS[i], float(p)) for p, i in zip(*probs.max(-1))][:len(texts)]


WORDS = ("my invoice is wrong please refund the charge i cannot log in reset password "
         "where is my order shipping delayed cancel subscription upgrade plan app crashes "
         "when i click export add dark mode delete my data account locked card declined "
         "twice this month tracking number not updated since monday").split()


def fake_requests(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ln = rng.choice([rng.randint(4, 15), rng.randint(17, 30), rng.randint(34, 60)])
        out.append(" ".join(rng.choice(WORDS) for _ in range(ln)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=96)
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    svc = RouterService(IntentCNN(), compile_model=not args.eager)
    t0 = time.perf_counter()
    svc.warmup()
    log.info("warmup done in %.1fs, serving %d requests", time.perf_counter() - t0, args.requests)

    queue = defaultdict(list)
    for text in fake_requests(args.requests, args.seed):
        b = bucket_for(len(tokenize(text)))
        queue[b].append(text)
        if len(queue[b]) == BATCH:
            bb, dt, preds = svc.handle(queue.pop(b))
            flag = "  <-- SLOW" if dt > 0.1 else ""
            log.info("batch bucket=%-3d latency=%7.1fms top=%s%s", bb, dt * 1e3, preds[0][0], flag)
    for b, texts in queue.items():
        svc.handle(texts)

    for b in BUCKETS:
        lat = sorted(svc.stats[b])
        if lat:
            log.info("bucket %-3d n=%-3d p50=%7.1fms max=%8.1fms", b, len(lat),
                     lat[len(lat) // 2] * 1e3, lat[-1] * 1e3)


if __name__ == "__main__":
    main()
