"""A/B check run before switching the intent-classifier training job to torch.compile.

Trains the same model twice from identical weights on identical batches, once eagerly and
once with torch.compile, and compares the per-step training loss.  The job is only allowed
to flip the `compile: true` flag in its config when this script exits 0.
"""
import argparse
import hashlib
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("ab_compile_check")

VOCAB = 512
N_INTENTS = 12


class Block(nn.Module):
    def __init__(self, d, heads, ff, p):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, dropout=p, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Dropout(p), nn.Linear(ff, d))
        self.drop = nn.Dropout(p)

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + self.drop(a)
        x = x + self.drop(self.ff(self.ln2(x)))
        return x


class IntentClassifier(nn.Module):
    def __init__(self, d=96, heads=4, ff=256, layers=2, max_len=48, p=0.1):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=0)
        self.pos = nn.Embedding(max_len, d)
        self.emb_drop = nn.Dropout(p)
        self.blocks = nn.ModuleList([Block(d, heads, ff, p) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, N_INTENTS)

    def forward(self, ids):
        pad_mask = ids.eq(0)
        pos = torch.arange(ids.size(1), device=ids.device)
        x = self.emb_drop(self.tok(ids) + self.pos(pos)[None])
        for blk in self.blocks:
            x = blk(x, pad_mask)
        x = self.ln_f(x)
        keep = (~pad_mask).unsqueeze(-1).float()
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


def make_batches(n_batches, batch_size, seq_len, seed):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(seq_len // 2, seq_len + 1, (batch_size,), generator=g)
        ids = torch.randint(1, VOCAB, (batch_size, seq_len), generator=g)
        ids[torch.arange(seq_len)[None, :] >= lengths[:, None]] = 0
        # label depends on a few "keyword" tokens so the model has something to learn
        labels = (ids[:, :4].sum(1) % N_INTENTS)
        batches.append((ids, labels))
    return batches


def weights_digest(model):
    h = hashlib.sha1()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:12]


def build(args):
    torch.manual_seed(args.seed)
    model = IntentClassifier(p=args.dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    return model, opt


def train(model, opt, batches, step_fn_model, seed, tag):
    model.train()
    torch.manual_seed(seed)  # same RNG stream for both arms
    losses = []
    t0 = time.perf_counter()
    for step, (ids, labels) in enumerate(batches):
        logits = step_fn_model(ids)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 5 == 0:
            log.info("[%s] step %3d loss %.5f", tag, step, loss.item())
    log.info("[%s] %d steps in %.1fs", tag, len(batches), time.perf_counter() - t0)
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=48)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--rtol", type=float, default=1e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.use_deterministic_algorithms(True)
    log.info("torch %s", torch.__version__)

    batches = make_batches(args.steps, args.batch_size, args.seq_len, seed=args.seed + 1)

    eager_model, eager_opt = build(args)
    compiled_model, compiled_opt = build(args)
    d_e, d_c = weights_digest(eager_model), weights_digest(compiled_model)
    log.info("initial weights digest eager=%s compiled=%s", d_e, d_c)
    assert d_e == d_c, "arms do not start from the same weights"

    eager_losses = train(eager_model, eager_opt, batches, eager_model, args.seed, "eager")
    compiled_fwd = torch.compile(compiled_model)
    compiled_losses = train(compiled_model, compiled_opt, batches, compiled_fwd, args.seed, "compiled")

    worst = 0.0
    first_bad = None
    for i, (a, b) in enumerate(zip(eager_losses, compiled_losses)):
        rel = abs(a - b) / max(abs(a), 1e-8)
        worst = max(worst, rel)
        if rel > args.rtol and first_bad is None:
            first_bad = i
    log.info("final loss eager %.5f compiled %.5f", eager_losses[-1], compiled_losses[-1])
    if first_bad is not None:
        log.error("A/B FAILED: loss curves diverge at step %d (eager %.6f vs compiled %.6f), worst rel diff %.2e",
                  first_bad, eager_losses[first_bad], compiled_losses[first_bad], worst)
        raise SystemExit(1)
    log.info("A/B OK: worst rel diff %.2e <= %.0e", worst, args.rtol)


if __name__ == "__main__":
    main()
