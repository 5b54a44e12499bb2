"""Moderation worker: scores queued posts per tenant with the AOTInductor package.

Each tenant configures its own decision threshold (policy team owns these).
Run:  python serve_moderation.py --package moderation.pt2
      python serve_moderation.py --eager          # same traffic through the PyTorch model
"""
import argparse
from collections import Counter, defaultdict

import torch

from moderation_model import LABELS, build_model

TENANT_POLICY = {
    "kids-platform": 0.25,
    "general-forum": 0.50,
    "gaming-chat": 0.65,
    "news-comments": 0.80,
}


def synthetic_queue(n_batches=24, seed=11, vocab=8000):
    g = torch.Generator().manual_seed(seed)
    tenants = list(TENANT_POLICY)
    for i in range(n_batches):
        tenant = tenants[i % len(tenants)]
        bsz = int(torch.randint(8, 48, (1,), generator=g))
        seq = int(torch.randint(16, 160, (1,), generator=g))
        ids = torch.randint(1, vocab, (bsz, seq), generator=g)
        lengths = torch.randint(4, seq + 1, (bsz,), generator=g)
        mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
        ids = ids * mask
        yield tenant, ids, mask


def load_scorer(args):
    if args.eager:
        model = build_model()
        return lambda ids, mask, threshold: model(ids, mask, threshold=threshold)
    return torch._inductor.aoti_load_package(args.package)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default="moderation.pt2")
    ap.add_argument("--eager", action="store_true")
    args = ap.parse_args()

    score = load_scorer(args)
    posts = Counter()
    flagged = defaultdict(Counter)
    with torch.inference_mode():
        for tenant, ids, mask in synthetic_queue():
            thr = TENANT_POLICY[tenant]
            probs, flags = score(ids, mask, threshold=thr)
            posts[tenant] += ids.shape[0]
            for j, name in enumerate(LABELS):
                flagged[tenant][name] += int(flags[:, j].sum())
            flagged[tenant]["any"] += int(flags.any(-1).sum())

    print(f"{'tenant':15s} {'thr':>5s} {'posts':>6s} {'any%':>6s}  " + " ".join(f"{n:>9s}" for n in LABELS))
    for tenant, thr in TENANT_POLICY.items():
        n = posts[tenant]
        row = " ".join(f"{flagged[tenant][name]:9d}" for name in LABELS)
        print(f"{tenant:15s} {thr:5.2f} {n:6d} {100 * flagged[tenant]['any'] / n:5.1f}%  {row}")


if __name__ == "__main__":
    main()
