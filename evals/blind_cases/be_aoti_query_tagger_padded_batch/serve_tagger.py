"""Batching front end of the query-tagging service (loads the AOTInductor package)."""
import argparse
import logging
import time
import zlib

import torch

from tagger_model import CATEGORIES, PAD_ID, VOCAB_SIZE, build_model

log = logging.getLogger("serve_tagger")


def tokenize(query, max_len=64):
    # hashing tokenizer shared with the training pipeline
    ids = [1 + zlib.crc32(w.encode()) % (VOCAB_SIZE - 1) for w in query.lower().split()]
    return ids[:max_len]


def collate(token_lists):
    width = max(len(t) for t in token_lists)
    ids = torch.full((len(token_lists), width), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(token_lists), width), dtype=torch.long)
    for i, toks in enumerate(token_lists):
        ids[i, : len(toks)] = torch.tensor(toks)
        mask[i, : len(toks)] = 1
    return ids, mask


class TaggerService:
    def __init__(self, package_path):
        self.runner = torch._inductor.aoti_load_package(package_path)

    @torch.no_grad()
    def tag(self, queries):
        ids, mask = collate([tokenize(q) for q in queries])
        logp = self.runner(ids, mask)
        conf, idx = logp.exp().max(-1)
        return [(CATEGORIES[i], round(c, 3)) for i, c in zip(idx.tolist(), conf.tolist())]


REQUESTS = [
    ["wireless noise cancelling headphones", "organic oat milk 1l", "kids rain jacket size 6"],
    ["usb c charger", "lego city fire station set with minifigures and truck"],
    ["yoga mat", "cast iron skillet 12 inch pre seasoned", "dog food", "running shoes men trail"],
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--package", default="artifacts/query_tagger.pt2")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    svc = TaggerService(args.package)
    reference = build_model()
    for n, queries in enumerate(REQUESTS):
        t0 = time.perf_counter()
        tags = svc.tag(queries)
        dt = (time.perf_counter() - t0) * 1e3
        ids, mask = collate([tokenize(q) for q in queries])
        ref = reference(ids, attention_mask=mask).argmax(-1).tolist()
        agree = sum(CATEGORIES[r] == t[0] for r, t in zip(ref, tags))
        log.info("request %d: %d queries in %.1f ms, agree with eager %d/%d  %s",
                 n, len(queries), dt, agree, len(queries), tags)


if __name__ == "__main__":
    main()
