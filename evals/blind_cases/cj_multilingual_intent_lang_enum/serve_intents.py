"""Multilingual intent classifier: micro-batching inference service (load test).

Requests are bucketed per language by the router, padded to a fixed length and
sent to the model in micro-batches of BATCH requests.

    python serve_intents.py --batches 72
    python serve_intents.py --batches 72 --no-compile
"""
import argparse
import logging
import statistics
import time
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

from langs import Lang, TRAFFIC_SHARE

log = logging.getLogger("intent-svc")

VOCAB = 4000
SEQ_LEN = 32
BATCH = 8
N_INTENTS = 24


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x, pad_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn_mask = pad_mask[:, None, None, :]
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class IntentClassifier(nn.Module):
    def __init__(self, d=128, heads=4, ff=256, layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=0)
        self.pos = nn.Embedding(SEQ_LEN, d)
        self.lang = nn.Embedding(len(Lang), d)
        self.blocks = nn.ModuleList(Block(d, heads, ff) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_INTENTS)

    def forward(self, ids, lang):
        pad_mask = ids != 0
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos) + self.lang.weight[lang]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.norm(x)
        m = pad_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(pooled)


class Router:
    """Groups incoming requests by language and emits fixed-size micro-batches."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.langs = list(TRAFFIC_SHARE)
        self.probs = torch.tensor([TRAFFIC_SHARE[l] for l in self.langs])

    def next_batch(self):
        lang = self.langs[torch.multinomial(self.probs, 1, generator=self.g).item()]
        lengths = torch.randint(6, SEQ_LEN + 1, (BATCH,), generator=self.g)
        ids = torch.zeros(BATCH, SEQ_LEN, dtype=torch.long)
        for i, n in enumerate(lengths.tolist()):
            ids[i, :n] = torch.randint(1, VOCAB, (n,), generator=self.g)
        return lang, ids


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=72)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)

    model = IntentClassifier().eval()
    runner = model if args.no_compile else torch.compile(model)

    # warm-up with the dominant language so the first real request is fast
    t0 = time.perf_counter()
    with torch.inference_mode():
        runner(torch.randint(1, VOCAB, (BATCH, SEQ_LEN)), Lang.EN)
    log.info("warm-up done in %.1fs (compile=%s)", time.perf_counter() - t0, not args.no_compile)

    router = Router(args.seed)
    lat = defaultdict(list)
    slow = []
    with torch.inference_mode():
        for step in range(args.batches):
            lang, ids = router.next_batch()
            t = time.perf_counter()
            logits = runner(ids, lang)
            intents = logits.argmax(-1)
            dt = (time.perf_counter() - t) * 1000
            lat[lang].append(dt)
            if dt > 500:
                slow.append((step, lang.name, dt))
                log.warning("batch %d (%s) took %.0f ms", step, lang.name, dt)
            if step % 24 == 0:
                log.info("batch %d lang=%s first intents=%s", step, lang.name, intents[:4].tolist())

    print("\nper-language latency (ms)   [steady state = all but the first batch of each language]")
    print(f"{'lang':5s} {'batches':>7s} {'first':>8s} {'p50':>8s} {'max':>8s}")
    for lang in Lang:
        xs = lat.get(lang)
        if not xs:
            continue
        rest = xs[1:] or xs
        print(f"{lang.name:5s} {len(xs):7d} {xs[0]:8.1f} {statistics.median(rest):8.2f} {max(rest):8.2f}")
    all_steady = [x for xs in lat.values() for x in xs[1:]]
    print(f"\nbatches over 500 ms: {len(slow)}   overall steady p50: {statistics.median(all_steady):.2f} ms")


if __name__ == "__main__":
    main()
