"""Offline recall@k evaluation for the dual-encoder ticket retriever.

Builds query/document pairs from a synthetic ticket corpus, encodes both
sides with the two towers and reports recall@1/5 and the mean positive score,
for the eager model and for the torch.compile'd model.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import fastops

log = logging.getLogger("eval_retrieval")


class Tower(nn.Module):
    def __init__(self, vocab, dim, layers, heads, max_len):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(max_len, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        mask = ids.eq(0)
        h = self.tok(ids) + self.pos[: ids.size(1)]
        h = self.enc(h, src_key_padding_mask=mask)
        keep = (~mask).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.proj(pooled)


class DualEncoder(nn.Module):
    def __init__(self, vocab=2000, dim=64, layers=2, heads=4, max_len=32, shared=True):
        super().__init__()
        self.query_tower = Tower(vocab, dim, layers, heads, max_len)
        self.doc_tower = self.query_tower if shared else Tower(vocab, dim, layers, heads, max_len)
        self.q_scale = nn.Parameter(torch.ones(dim))
        self.d_scale = nn.Parameter(torch.ones(dim))
        self.logit_scale = nn.Parameter(torch.tensor(2.3))

    def _normalize(self, x):
        if self.training:
            return F.normalize(x, dim=-1, eps=1e-6)
        return fastops.l2_normalize(x, 1e-6)

    def forward(self, q_ids, d_ids):
        q = self._normalize(self.query_tower(q_ids)) * self.q_scale
        d = self._normalize(self.doc_tower(d_ids)) * self.d_scale
        return self.logit_scale.exp() * q @ d.t()


def make_corpus(n, seq_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    docs = torch.randint(1, vocab, (n, seq_len), generator=g)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=g)
    for i, L in enumerate(lengths.tolist()):
        docs[i, L:] = 0
    queries = docs.clone()
    noise = torch.rand(queries.shape, generator=g) < 0.3
    queries[noise & queries.ne(0)] = torch.randint(1, vocab, (int((noise & queries.ne(0)).sum()),), generator=g)
    return queries, docs


def train(model, queries, docs, steps, batch, lr):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    g = torch.Generator().manual_seed(1)
    for step in range(steps):
        idx = torch.randint(0, queries.size(0), (batch,), generator=g)
        logits = model(queries[idx], docs[idx])
        target = torch.arange(batch)
        loss = (F.cross_entropy(logits, target) + F.cross_entropy(logits.t(), target)) / 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            log.info("train step %3d  loss %.4f", step, loss.item())


@torch.no_grad()
def evaluate(model, queries, docs, batch):
    model.eval()
    hits1 = hits5 = 0
    pos_scores = []
    for start in range(0, queries.size(0), batch):
        q = queries[start:start + batch]
        d = docs[start:start + batch]
        logits = model(q, d)
        target = torch.arange(q.size(0))
        top = logits.topk(min(5, logits.size(1)), dim=1).indices
        hits1 += (top[:, 0] == target).sum().item()
        hits5 += (top == target[:, None]).any(1).sum().item()
        pos_scores.append(logits.diagonal())
    n = queries.size(0)
    return hits1 / n, hits5 / n, torch.cat(pos_scores).mean().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train-steps", type=int, default=60)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--n-eval", type=int, default=256)
    p.add_argument("--seq-len", type=int, default=24)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    vocab = 2000
    tr_q, tr_d = make_corpus(2048, args.seq_len, vocab, seed=args.seed)
    ev_q, ev_d = make_corpus(args.n_eval, args.seq_len, vocab, seed=args.seed + 100)

    model = DualEncoder(vocab=vocab, max_len=args.seq_len)
    train(model, tr_q, tr_d, args.train_steps, args.batch, args.lr)

    t0 = time.perf_counter()
    r1, r5, pos = evaluate(model, ev_q, ev_d, args.batch)
    log.info("eager     recall@1 %.3f  recall@5 %.3f  mean pos score %.3f  (%.1fs)",
             r1, r5, pos, time.perf_counter() - t0)

    compiled = torch.compile(model)
    t0 = time.perf_counter()
    cr1, cr5, cpos = evaluate(compiled, ev_q, ev_d, args.batch)
    log.info("compiled  recall@1 %.3f  recall@5 %.3f  mean pos score %.3f  (%.1fs)",
             cr1, cr5, cpos, time.perf_counter() - t0)

    if abs(r1 - cr1) > 0.02 or abs(pos - cpos) > 1e-3 * max(1.0, abs(pos)):
        log.error("compiled evaluation disagrees with eager")
        raise SystemExit(1)
    log.info("eager and compiled agree")


if __name__ == "__main__":
    main()
