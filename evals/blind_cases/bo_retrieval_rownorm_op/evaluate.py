"""Offline retrieval eval for the bag-of-tokens dual encoder.

Builds a synthetic query/document collection (each query is a corrupted copy
of one document), embeds everything with the encoder, and reports recall@k.

    python evaluate.py               # eager
    python evaluate.py --compile     # torch.compile'd encoder
    python evaluate.py --ab          # run both and compare
"""
import argparse
import logging
import time

import numpy as np
import torch

from encoder import BagEncoder

log = logging.getLogger("retrieval-eval")


def make_collection(n_docs, n_queries, doc_len, vocab, corrupt, seed):
    g = torch.Generator().manual_seed(seed)
    # Zipf-ish token distribution, like real text
    ranks = torch.arange(1, vocab + 1, dtype=torch.float64)
    probs = (1.0 / ranks) / (1.0 / ranks).sum()
    docs = torch.multinomial(probs.expand(n_docs, -1), doc_len, replacement=True, generator=g)
    targets = torch.randperm(n_docs, generator=g)[:n_queries]
    queries = docs[targets].clone()
    keep = torch.rand(queries.shape, generator=g) > corrupt
    noise = torch.multinomial(probs.expand(n_queries, -1), doc_len, replacement=True, generator=g)
    queries = torch.where(keep, queries, noise)
    return docs, queries, targets


@torch.no_grad()
def embed(model, tokens, batch_size):
    embs, confs = [], []
    for i in range(0, tokens.shape[0], batch_size):
        e, c = model(tokens[i:i + batch_size])
        embs.append(e)
        confs.append(c)
    return torch.cat(embs), torch.cat(confs)


def recall_at(scores, targets, ks):
    top = scores.topk(max(ks), dim=1).indices
    hits = top == targets[:, None]
    return {k: hits[:, :k].any(1).float().mean().item() for k in ks}, top[:, 0]


def run(model, docs, queries, targets, args, tag):
    t0 = time.perf_counter()
    d_emb, d_conf = embed(model, docs, args.batch_size)
    q_emb, q_conf = embed(model, queries, args.batch_size)
    scores = q_emb @ d_emb.T
    rec, top1 = recall_at(scores, targets, (1, 5, 10))
    dt = time.perf_counter() - t0
    log.info("[%s] recall@1=%.4f recall@5=%.4f recall@10=%.4f  mean|q|=%.3f  mean conf=%.3f  score range=[%.2f, %.2f]  (%.1fs)",
             tag, rec[1], rec[5], rec[10], q_emb.norm(dim=1).mean().item(), q_conf.mean().item(),
             scores.min().item(), scores.max().item(), dt)
    return rec, top1, scores


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--ab", action="store_true", help="run eager and compiled and compare")
    p.add_argument("--docs", type=int, default=4096)
    p.add_argument("--queries", type=int, default=1024)
    p.add_argument("--doc-len", type=int, default=48)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--corrupt", type=float, default=0.6)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    model = BagEncoder(vocab_size=args.vocab).eval()
    docs, queries, targets = make_collection(args.docs, args.queries, args.doc_len, args.vocab,
                                             args.corrupt, args.seed)
    log.info("collection: %d docs, %d queries, doc_len=%d, torch %s", args.docs, args.queries,
             args.doc_len, torch.__version__)

    results = {}
    if args.ab or not args.compile:
        results["eager"] = run(model, docs, queries, targets, args, "eager")
    if args.ab or args.compile:
        cmodel = torch.compile(model)
        results["compiled"] = run(cmodel, docs, queries, targets, args, "compiled")

    if args.ab:
        (re_, te, se), (rc, tc, sc) = results["eager"], results["compiled"]
        agree = (te == tc).float().mean().item()
        log.info("A/B: top-1 agreement %.4f, max |score diff| %.4g", agree, (se - sc).abs().max().item())
        if agree < 0.99:
            log.error("A/B check FAILED: compiled encoder ranks differently from eager")
            raise SystemExit(1)
        log.info("A/B check passed")


if __name__ == "__main__":
    main()
