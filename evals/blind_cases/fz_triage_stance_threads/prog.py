"""Ticket triage service: retrieval embedder + triage classifier, one worker thread each.

Replays a captured traffic log through both workers, then runs the nightly
audit (re-score every triage response with the eager model).
"""
import queue
import random
import threading
import time
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 4000
MAX_LEN = 48
PAD = 0
LABELS = ["billing", "outage", "account", "feature", "abuse"]
ESCALATE = {1, 4}  # outage, abuse


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + a
        return x + self.ff(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, d=128, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = nn.Embedding(MAX_LEN, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, ids):
        pad_mask = ids.eq(PAD)
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        for b in self.blocks:
            x = b(x, pad_mask)
        x = self.ln(x)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)
        return (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)


class RetrievalEmbedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Encoder(d=96, layers=1)
        self.proj = nn.Linear(96, 64)

    def forward(self, ids):
        return F.normalize(self.proj(self.enc(ids)), dim=-1)


class TriageClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Encoder(d=128, layers=1)
        self.head = nn.Linear(128, len(LABELS))
        # tenants on the "strict" policy get a prior shift towards outage/abuse
        self.register_buffer("strict_shift", torch.tensor([0.0, 1.5, 0.0, -0.5, 1.0]))
        self.strict_temperature = 0.7

    def forward(self, ids, policy: str = "standard"):
        logits = self.head(self.enc(ids))
        if policy == "strict":
            logits = logits / self.strict_temperature + self.strict_shift
        return logits.softmax(-1)


def encode(text):
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in text.lower().split()][:MAX_LEN]
    return ids + [PAD] * (MAX_LEN - len(ids))


def make_traffic(n, seed=0):
    rng = random.Random(seed)
    words = ("refund invoice charged twice login password locked down outage error 500 "
             "slow dashboard feature request export csv spam abuse harassment api key "
             "timeout region eu us billing plan upgrade cancel account email").split()
    log = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(6, 40)))
        tenant = rng.choice(["acme", "globex", "initech", "umbrella", "hooli"])
        log.append({"id": i, "tenant": tenant, "text": text})
    return log


# tenant -> triage policy (loaded from the tenant config service in prod)
TENANT_POLICY = {"acme": "standard", "globex": "standard", "initech": "strict",
                 "umbrella": "standard", "hooli": "strict"}


class EmbedWorker(threading.Thread):
    BATCH = 8

    def __init__(self, model):
        super().__init__(name="embedder", daemon=True)
        self.model = torch.compile(model)
        self.inbox = queue.Queue()
        self.ready = threading.Event()
        self.index = {}

    def run(self):
        with torch.inference_mode():
            warm = torch.randint(1, VOCAB, (self.BATCH, MAX_LEN))
            for _ in range(3):
                self.model(warm)
            # fixed batch / fixed length after warm-up: guards can't change, skip them
            with torch.compiler.set_stance(skip_guard_eval_unsafe=True):
                self.ready.set()
                while True:
                    batch = self.inbox.get()
                    if batch is None:
                        break
                    ids = torch.tensor([encode(r["text"]) for r in batch])
                    if len(batch) < self.BATCH:
                        ids = torch.cat([ids, ids.new_zeros(self.BATCH - len(batch), MAX_LEN)])
                    emb = self.model(ids)[: len(batch)]
                    for r, e in zip(batch, emb):
                        self.index[r["id"]] = e


class TriageWorker(threading.Thread):
    def __init__(self, model):
        super().__init__(name="triage", daemon=True)
        self.model = torch.compile(model)
        self.inbox = queue.Queue()
        self.ready = threading.Event()
        self.responses = []

    def run(self):
        with torch.inference_mode():
            self.model(torch.randint(1, VOCAB, (1, MAX_LEN)), "standard")
            self.ready.set()
            while True:
                req = self.inbox.get()
                if req is None:
                    break
                policy = TENANT_POLICY[req["tenant"]]
                ids = torch.tensor([encode(req["text"])])
                probs = self.model(ids, policy)[0]
                self.responses.append({"id": req["id"], "policy": policy, "ids": ids,
                                       "probs": probs, "escalate": int(probs.argmax()) in ESCALATE})


def main():
    torch.manual_seed(0)
    embedder = RetrievalEmbedder().eval()
    triage = TriageClassifier().eval()

    emb_w, tri_w = EmbedWorker(embedder), TriageWorker(triage)
    t0 = time.time()
    emb_w.start()
    tri_w.start()
    emb_w.ready.wait()
    tri_w.ready.wait()
    print(f"workers warm after {time.time() - t0:.1f}s")

    traffic = make_traffic(120)
    for i in range(0, len(traffic), EmbedWorker.BATCH):
        emb_w.inbox.put(traffic[i:i + EmbedWorker.BATCH])
    for r in traffic:
        tri_w.inbox.put(r)
    tri_w.inbox.put(None)
    tri_w.join()
    emb_w.inbox.put(None)
    emb_w.join()
    print(f"served {len(tri_w.responses)} triage / {len(emb_w.index)} embeddings "
          f"in {time.time() - t0:.1f}s")

    # nightly audit: re-score every response with the eager model
    stats = {}
    with torch.inference_mode():
        for resp in tri_w.responses:
            ref = triage(resp["ids"], resp["policy"])[0]
            s = stats.setdefault(resp["policy"], {"n": 0, "bad": 0, "maxdiff": 0.0, "esc": 0})
            d = (ref - resp["probs"]).abs().max().item()
            s["n"] += 1
            s["esc"] += resp["escalate"]
            s["maxdiff"] = max(s["maxdiff"], d)
            s["bad"] += d > 1e-4
    ok = True
    for policy, s in sorted(stats.items()):
        print(f"audit[{policy:8s}] n={s['n']:3d} escalated={s['esc']:3d} "
              f"mismatched={s['bad']:3d} max|dp|={s['maxdiff']:.4f}")
        ok &= s["bad"] == 0
    print("AUDIT", "PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
