"""Intent routing service: loads every locale model at startup, warms them up, then serves.

Startup used to load the models one after another; we now load them on a thread pool to cut
pod start time (torch 2.15 releases the GIL while reading tensor data).
"""
import argparse
import glob
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import torch

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s [%(threadName)s] %(message)s")
log = logging.getLogger("router")


class LocaleModel:
    def __init__(self, locale: str, path: str):
        self.locale = locale
        self.path = path
        self.module = None

    def load(self):
        t0 = time.perf_counter()
        ep = torch.export.load(self.path)
        self.module = ep.module()
        self.warmup()
        log.info("%s ready in %.2fs", self.locale, time.perf_counter() - t0)
        return self

    @torch.no_grad()
    def warmup(self):
        ids = torch.randint(1, 8000, (8, 24))
        mask = torch.ones_like(ids)
        out = self.module(ids, mask)
        assert out.shape == (8, 24), out.shape

    @torch.no_grad()
    def predict(self, ids, mask):
        return self.module(ids, mask).argmax(-1)


def load_all(paths, workers):
    models = [LocaleModel(os.path.basename(p)[len("intent_"):-len(".pt2")], p) for p in paths]
    if workers <= 1:
        return {m.locale: m.load() for m in models}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="loader") as pool:
        loaded = list(pool.map(LocaleModel.load, models))
    return {m.locale: m for m in loaded}


def fake_traffic(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        b = int(torch.randint(1, 9, (1,), generator=g))
        t = int(torch.randint(4, 40, (1,), generator=g))
        ids = torch.randint(1, 8000, (b, t), generator=g)
        lens = torch.randint(2, t + 1, (b,), generator=g)
        mask = (torch.arange(t)[None, :] < lens[:, None]).long()
        yield ids * mask, mask


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifacts", default="artifacts")
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--requests", type=int, default=60)
    args = ap.parse_args()

    paths = sorted(glob.glob(os.path.join(args.artifacts, "intent_*.pt2")))
    if not paths:
        log.error("no models under %s, run export_models.py first", args.artifacts)
        return 2
    t0 = time.perf_counter()
    try:
        models = load_all(paths, args.workers)
    except Exception:
        log.exception("startup failed")
        return 1
    log.info("loaded %d locale models in %.2fs (workers=%d)", len(models), time.perf_counter() - t0, args.workers)

    locales = sorted(models)
    lat = []
    for i, (ids, mask) in enumerate(fake_traffic(args.requests)):
        loc = locales[i % len(locales)]
        t1 = time.perf_counter()
        pred = models[loc].predict(ids, mask)
        lat.append(time.perf_counter() - t1)
        if i % 20 == 0:
            log.info("req %d locale=%s batch=%d len=%d -> intents %s", i, loc, ids.shape[0], ids.shape[1],
                     pred.tolist()[:4])
    lat.sort()
    log.info("served %d requests, p50 %.1f ms, p95 %.1f ms", len(lat), 1e3 * lat[len(lat) // 2],
             1e3 * lat[int(0.95 * len(lat))])
    return 0


if __name__ == "__main__":
    sys.exit(main())
