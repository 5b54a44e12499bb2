"""Nightly parity gate: compiled dual-encoder eval must match eager eval.

Runs the retrieval eval (in-batch InfoNCE loss, recall@1) once with the eager encoder and once
through the serving runner (torch.compile + static batch), and fails if any batch differs.
"""
import argparse
import logging
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from serving import StaticBatchRunner

log = logging.getLogger("parity")


class DualEncoder(nn.Module):
    def __init__(self, vocab=8000, d=128, layers=2, heads=4, seq_len=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, seq_len, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.proj = nn.Linear(d, d)
        self.log_tau = nn.Parameter(torch.tensor(-3.0))

    def embed(self, ids):
        h = self.enc(self.tok(ids) + self.pos[:, : ids.shape[1]])
        return F.normalize(self.proj(h.mean(1)), dim=-1)

    def forward(self, q_ids, d_ids):
        q, d = self.embed(q_ids), self.embed(d_ids)
        logits = q @ d.t() / self.log_tau.exp()
        return logits.log_softmax(dim=-1)


def make_eval_set(n, seq_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    docs = torch.randint(1, vocab, (n, seq_len), generator=g)
    # queries: the doc with ~40% of tokens replaced
    noise = torch.randint(1, vocab, (n, seq_len), generator=g)
    keep = torch.rand(n, seq_len, generator=g) > 0.4
    queries = torch.where(keep, docs, noise)
    return queries, docs


def run_eval(score_fn, queries, docs, bs):
    out = []
    for i in range(0, len(queries), bs):
        q, d = queries[i:i + bs], docs[i:i + bs]
        logp = score_fn(q, d)
        n = q.shape[0]
        pos = logp[torch.arange(n), torch.arange(n)]
        out.append({"loss": -pos.mean().item(), "pos_logp": pos,
                    "r1": (logp.argmax(-1) == torch.arange(n)).float().mean().item()})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--ckpt", default=None, help="optional state_dict to load")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")

    torch.manual_seed(args.seed)
    model = DualEncoder()
    if args.ckpt:
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
    model.eval()
    queries, docs = make_eval_set(args.n, 32, 8000, args.seed + 1)
    log.info("torch %s | eval set %d pairs | batch %d", torch.__version__, args.n, args.batch_size)

    with torch.inference_mode():
        t0 = time.perf_counter()
        ref = run_eval(model, queries, docs, args.batch_size)
        t_eager = time.perf_counter() - t0

        runner = StaticBatchRunner(model, max_batch=args.batch_size)
        t0 = time.perf_counter()
        got = run_eval(runner, queries, docs, args.batch_size)
        t_comp = time.perf_counter() - t0
    log.info("eager eval %.2f s, compiled eval %.2f s (incl. compile)", t_eager, t_comp)

    failures = 0
    for b, (r, c) in enumerate(zip(ref, got)):
        diff = (r["pos_logp"] - c["pos_logp"]).abs().max().item()
        ok = diff <= args.atol
        failures += not ok
        log.info("batch %d (n=%2d): loss eager %.5f compiled %.5f | r@1 %.3f / %.3f | max|dlogp| %.2e %s",
                 b, r["pos_logp"].numel(), r["loss"], c["loss"], r["r1"], c["r1"], diff, "ok" if ok else "MISMATCH")
    if failures:
        log.error("PARITY GATE FAILED: %d/%d batches differ beyond atol=%g", failures, len(ref), args.atol)
        sys.exit(1)
    log.info("parity gate passed")


if __name__ == "__main__":
    main()
