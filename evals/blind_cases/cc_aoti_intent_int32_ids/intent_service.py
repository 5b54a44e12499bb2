"""Intent classifier: package with AOTInductor and serve pre-tokenized request shards.

Usage:
    python intent_service.py package   # export + aoti_compile_and_package -> artifacts/intent.pt2
    python intent_service.py serve     # load the package and score requests/*.npz
    python intent_service.py all       # both (what CI runs)
"""
import argparse
import json
import logging
import os
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn as nn

log = logging.getLogger("intent_service")

VOCAB = 8000
PAD_ID = 0
MAX_LEN = 48
LABELS = ["billing", "cancel", "upgrade", "bug_report", "login", "refund", "other"]
ART = "artifacts"
REQ = "requests"


class IntentClassifier(nn.Module):
    def __init__(self, vocab=VOCAB, dim=64, hidden=128, n_labels=len(LABELS)):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD_ID)
        self.pos = nn.Parameter(torch.randn(MAX_LEN, dim) * 0.02)
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, hidden), nn.GELU(), nn.Linear(hidden, n_labels))

    def forward(self, token_ids, attention_mask):
        seq = token_ids.shape[1]
        h = self.embed(token_ids) + self.pos[:seq]
        h = self.norm(h)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        mean = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        mx = h.masked_fill(m == 0, -1e4).amax(1)
        return self.mlp(torch.cat([mean, mx], dim=-1))


def hash_tokenize(text, max_len=MAX_LEN):
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB - 1) for w in text.lower().split()][:max_len]
    return ids


def build_model(seed=0):
    torch.manual_seed(seed)
    model = IntentClassifier().eval()
    ckpt = os.path.join(ART, "intent_state.pt")
    if os.path.exists(ckpt):
        model.load_state_dict(torch.load(ckpt))
    else:
        os.makedirs(ART, exist_ok=True)
        torch.save(model.state_dict(), ckpt)
    return model


def write_request_shards(n_shards=3, per_shard=24, seed=0):
    """Offline tokenization job: shards are stored compactly (ids < 2**31, int32 is plenty)."""
    rng = np.random.default_rng(seed)
    words = ("my card was charged twice please refund the order i cannot log in reset password "
             "app crashes when i open settings upgrade plan to pro cancel subscription today").split()
    os.makedirs(REQ, exist_ok=True)
    for s in range(n_shards):
        ids = np.full((per_shard, MAX_LEN), PAD_ID, dtype=np.int32)
        mask = np.zeros((per_shard, MAX_LEN), dtype=np.int32)
        for r in range(per_shard):
            n = int(rng.integers(4, MAX_LEN))
            toks = hash_tokenize(" ".join(rng.choice(words, size=n)))
            ids[r, : len(toks)] = toks
            mask[r, : len(toks)] = 1
        np.savez(os.path.join(REQ, f"shard_{s:03d}.npz"), token_ids=ids, attention_mask=mask)


def package(args):
    model = build_model()
    ex_ids = torch.randint(1, VOCAB, (4, MAX_LEN))
    ex_mask = torch.ones(4, MAX_LEN, dtype=torch.long)
    batch = torch.export.Dim("batch", min=1, max=256)
    t0 = time.time()
    ep = torch.export.export(model, (ex_ids, ex_mask),
                             dynamic_shapes={"token_ids": {0: batch}, "attention_mask": {0: batch}})
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(ART, "intent.pt2"))
    log.info("packaged %s in %.1fs", path, time.time() - t0)
    with open(os.path.join(ART, "meta.json"), "w") as f:
        json.dump({"labels": LABELS, "max_len": MAX_LEN, "vocab": VOCAB, "torch": torch.__version__}, f)


def load_shard(path):
    data = np.load(path)
    ids = torch.from_numpy(data["token_ids"])
    mask = torch.from_numpy(data["attention_mask"])
    return ids, mask


def serve(args):
    meta = json.load(open(os.path.join(ART, "meta.json")))
    runner = torch._inductor.aoti_load_package(os.path.join(ART, "intent.pt2"))
    reference = build_model() if args.check_eager else None
    if not os.path.isdir(REQ):
        write_request_shards()
    shards = sorted(os.listdir(REQ))
    counts = {l: 0 for l in meta["labels"]}
    n_req, t_total = 0, 0.0
    for name in shards:
        ids, mask = load_shard(os.path.join(REQ, name))
        assert int(ids.max()) < meta["vocab"] and int(ids.min()) >= 0, "token id out of range"
        t0 = time.perf_counter()
        with torch.inference_mode():
            logits = runner(ids, mask)
        t_total += time.perf_counter() - t0
        pred = logits.argmax(-1)
        if reference is not None:
            with torch.inference_mode():
                ref = reference(ids, mask)
            diff = (ref - logits).abs().max().item()
            agree = (ref.argmax(-1) == pred).float().mean().item()
            log.info("%s: max|eager-aoti|=%.2e agree=%.3f", name, diff, agree)
        for p in pred.tolist():
            counts[meta["labels"][p]] += 1
        n_req += ids.shape[0]
    log.info("served %d requests from %d shards, %.2f ms/shard", n_req, len(shards), 1e3 * t_total / len(shards))
    log.info("label counts: %s", counts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["package", "serve", "all"])
    ap.add_argument("--check-eager", action="store_true", help="also run the eager model and compare")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if args.cmd in ("package", "all"):
        package(args)
    if args.cmd in ("serve", "all"):
        serve(args)


if __name__ == "__main__":
    sys.exit(main())
