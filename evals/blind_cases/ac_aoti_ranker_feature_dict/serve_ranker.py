"""Feed ranking worker: loads the AOTInductor package and scores candidate slates.

Shadow mode (--shadow) also scores every request with the eager model loaded from
ranker_state.pt and reports the disagreement, so we can validate the artifact on
replayed production traffic before switching it on.

usage: python serve_ranker.py --package artifacts/ranker.pt2 --requests 200 --shadow
"""
import argparse
import logging
import os
import time

import torch

from ranker_model import FeedRanker, EMB_DIM, CTX_DIM, planted_logit, auc

log = logging.getLogger("ranker_worker")


class EmbeddingStore:
    """Stand-in for the nightly embedding store (id -> vector)."""

    def __init__(self, name, n_ids, dim, seed):
        g = torch.Generator().manual_seed(seed)
        self.name = name
        self.table = torch.randn(n_ids, dim, generator=g)

    def lookup(self, ids):
        return {self.name: self.table[torch.as_tensor(ids)]}


class ContextEncoder:
    def __call__(self, request, n):
        g = torch.Generator().manual_seed(request["request_id"])
        base = torch.randn(CTX_DIM, generator=g)
        jitter = 0.1 * torch.randn(n, CTX_DIM, generator=g)
        return base + jitter


class RankingWorker:
    def __init__(self, package_path, shadow_state=None):
        t0 = time.time()
        self.runner = torch._inductor.aoti_load_package(package_path)
        log.info("loaded %s in %.2fs", package_path, time.time() - t0)
        self.item_store = EmbeddingStore("item_emb", 50_000, EMB_DIM, seed=11)
        self.user_store = EmbeddingStore("user_emb", 10_000, EMB_DIM, seed=12)
        self.ctx_encoder = ContextEncoder()
        self.shadow = None
        if shadow_state is not None:
            self.shadow = FeedRanker()
            self.shadow.load_state_dict(torch.load(shadow_state))
            self.shadow.eval()

    def assemble(self, request):
        n = len(request["item_ids"])
        feats = {}
        feats.update(self.item_store.lookup(request["item_ids"]))
        feats.update(self.user_store.lookup([request["user_id"]] * n))
        feats["context"] = self.ctx_encoder(request, n)
        return feats

    @torch.no_grad()
    def score(self, request):
        feats = self.assemble(request)
        scores = self.runner(feats)
        shadow_scores = self.shadow(feats) if self.shadow is not None else None
        return feats, scores, shadow_scores


def replay_log(n_requests, seed=123):
    g = torch.Generator().manual_seed(seed)
    for rid in range(n_requests):
        n_cand = int(torch.randint(8, 96, (1,), generator=g))
        yield {
            "request_id": rid,
            "user_id": int(torch.randint(0, 10_000, (1,), generator=g)),
            "item_ids": torch.randint(0, 50_000, (n_cand,), generator=g).tolist(),
        }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default="artifacts/ranker.pt2")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--shadow", action="store_true")
    ap.add_argument("--topk", type=int, default=5)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    state = os.path.join(os.path.dirname(os.path.abspath(args.package)), "ranker_state.pt")
    worker = RankingWorker(args.package, shadow_state=state if args.shadow else None)

    all_scores, all_shadow, all_labels = [], [], []
    max_diff, topk_agree, latencies = 0.0, 0, []
    g = torch.Generator().manual_seed(99)
    for req in replay_log(args.requests):
        t0 = time.perf_counter()
        feats, scores, shadow_scores = worker.score(req)
        latencies.append(time.perf_counter() - t0)
        # offline labels for the replayed traffic (clicks joined later)
        logit = planted_logit(feats["user_emb"], feats["item_emb"], feats["context"])
        labels = (torch.rand(len(logit), generator=g) < torch.sigmoid(logit)).float()
        all_scores.append(scores)
        all_labels.append(labels)
        if shadow_scores is not None:
            all_shadow.append(shadow_scores)
            max_diff = max(max_diff, (scores - shadow_scores).abs().max().item())
            k = min(args.topk, len(scores))
            a = set(torch.topk(scores, k).indices.tolist())
            b = set(torch.topk(shadow_scores, k).indices.tolist())
            topk_agree += int(a == b)

    scores, labels = torch.cat(all_scores), torch.cat(all_labels)
    lat = torch.tensor(latencies) * 1e3
    log.info("requests %d  candidates %d  p50 %.2fms  p99 %.2fms",
             args.requests, len(scores), lat.median().item(), lat.quantile(0.99).item())
    log.info("served AUC %.4f", auc(scores, labels))
    if args.shadow:
        shadow = torch.cat(all_shadow)
        log.info("shadow AUC %.4f", auc(shadow, labels))
        log.info("shadow check: max |aoti - eager| = %.4g   top-%d slate agreement %d/%d",
                 max_diff, args.topk, topk_agree, args.requests)
        if max_diff > 1e-4:
            log.error("shadow check FAILED: packaged model disagrees with eager model")
            raise SystemExit(1)


if __name__ == "__main__":
    main()
