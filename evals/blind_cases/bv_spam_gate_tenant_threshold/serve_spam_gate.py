"""Multi-tenant spam gate: scores incoming messages with a small hashed-n-gram
classifier and returns a per-message decision using each tenant's own operating
point (decision threshold + calibration temperature).

Usage:
    python serve_spam_gate.py --requests 120 [--no-compile]
"""
import argparse
import math
import random
import statistics
import time
import zlib
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB_BUCKETS = 1 << 15
MAX_TOKENS = 48
BATCH = 16


# ----------------------------------------------------------------------------- model
class NgramSpamClassifier(nn.Module):
    def __init__(self, buckets=VOCAB_BUCKETS, dim=96, hidden=192, n_labels=2):
        super().__init__()
        self.embed = nn.Embedding(buckets, dim, padding_idx=0)
        self.mix = nn.Sequential(
            nn.Linear(dim, hidden), nn.GELU(), nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden), nn.GELU(),
        )
        self.head = nn.Linear(hidden, n_labels)

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).to(self.embed.weight.dtype)
        emb = self.embed(ids) * mask
        pooled = emb.sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(self.mix(pooled))


# ----------------------------------------------------------------------------- tenants
@dataclass
class TenantPolicy:
    name: str
    threshold: float      # probability above which a message is blocked
    temperature: float    # calibration temperature fitted offline per tenant


def load_policies(n_tenants, seed=7):
    rng = random.Random(seed)
    policies = {}
    for i in range(n_tenants):
        policies[f"tenant-{i:02d}"] = TenantPolicy(
            name=f"tenant-{i:02d}",
            threshold=round(rng.uniform(0.55, 0.95), 3),
            temperature=round(rng.uniform(0.8, 1.6), 3),
        )
    return policies


# ----------------------------------------------------------------------------- featurizer
def hash_ngrams(text, n=3):
    text = f"<{text.lower()}>"
    ids = []
    for tok in text.split():
        ids.append(zlib.crc32(tok.encode()) % (VOCAB_BUCKETS - 1) + 1)
    for i in range(len(text) - n + 1):
        ids.append(zlib.crc32(text[i:i + n].encode()) % (VOCAB_BUCKETS - 1) + 1)
    return ids[:MAX_TOKENS]


def collate(texts):
    out = torch.zeros(BATCH, MAX_TOKENS, dtype=torch.long)
    for row, t in enumerate(texts):
        ids = hash_ngrams(t)
        out[row, :len(ids)] = torch.tensor(ids)
    return out


WORDS = ("free win prize click now offer meeting invoice lunch project "
         "update crypto bonus urgent account verify password team report").split()


def make_request(rng, policies):
    tenant = rng.choice(list(policies))
    n = rng.randint(4, BATCH)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) for _ in range(n)]
    return tenant, texts


# ----------------------------------------------------------------------------- scoring
def score_batch(model, ids, threshold, temperature):
    logits = model(ids)
    margin = (logits[:, 1] - logits[:, 0]) / temperature
    # compare in logit space: p > thr  <=>  logit(p) > log(thr / (1 - thr))
    cut = math.log(threshold / (1.0 - threshold))
    blocked = margin > cut
    prob = torch.sigmoid(margin)
    return prob, blocked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=120)
    ap.add_argument("--tenants", type=int, default=12)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = NgramSpamClassifier().eval()
    policies = load_policies(args.tenants)

    scorer = score_batch if args.no_compile else torch.compile(score_batch)

    # warm-up: one request per batch shape we serve (always padded to BATCH)
    with torch.inference_mode():
        t0 = time.perf_counter()
        warm = policies["tenant-00"]
        scorer(model, collate(["hello team"]), warm.threshold, warm.temperature)
        print(f"warm-up done in {time.perf_counter() - t0:.1f}s")

    rng = random.Random(1234)
    latencies, blocked_total, slow = [], 0, 0
    t_start = time.perf_counter()
    with torch.inference_mode():
        for step in range(args.requests):
            tenant, texts = make_request(rng, policies)
            pol = policies[tenant]
            ids = collate(texts)
            t0 = time.perf_counter()
            prob, blocked = scorer(model, ids, pol.threshold, pol.temperature)
            dt = (time.perf_counter() - t0) * 1e3
            latencies.append(dt)
            blocked_total += int(blocked[:len(texts)].sum())
            if dt > 250:
                slow += 1
                print(f"[req {step:4d}] {tenant} slow request: {dt:8.1f} ms")
    wall = time.perf_counter() - t_start

    lat = sorted(latencies)
    p50 = statistics.median(lat)
    p99 = lat[int(0.99 * (len(lat) - 1))]
    print(f"served {args.requests} requests in {wall:.1f}s  blocked={blocked_total}")
    print(f"latency ms: p50={p50:.2f}  p99={p99:.1f}  max={lat[-1]:.1f}  slow(>250ms)={slow}")
    print(f"mean latency last 40 requests: {statistics.mean(latencies[-40:]):.2f} ms")


if __name__ == "__main__":
    main()
