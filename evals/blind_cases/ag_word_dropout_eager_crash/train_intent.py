"""Bag-of-embeddings intent classifier with scheduled word dropout.

Word dropout replaces random tokens by <unk> early in training and is annealed
away over the first --wd-epochs epochs.
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, UNK = 0, 1
log = logging.getLogger("intent")


def synth_corpus(n, vocab, n_intents, max_len, seed):
    g = torch.Generator().manual_seed(seed)
    # every intent has a handful of keywords; the rest of the sentence is noise
    keywords = torch.randint(2, vocab, (n_intents, 6), generator=torch.Generator().manual_seed(99))
    labels = torch.randint(0, n_intents, (n,), generator=g)
    lengths = torch.randint(6, max_len + 1, (n,), generator=g)
    ids = torch.randint(2, vocab, (n, max_len), generator=g)
    kw_pos = torch.randint(0, 6, (n, 3), generator=g)
    for j in range(3):
        ids[:, j * 2] = keywords[labels, kw_pos[:, j]]
    pos = torch.arange(max_len).expand(n, max_len)
    ids = ids.masked_fill(pos >= lengths[:, None], PAD)
    return ids, labels


class IntentModel(nn.Module):
    def __init__(self, vocab, dim, n_intents):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Dropout(0.1), nn.Linear(2 * dim, n_intents))

    def word_dropout(self, ids, keep_prob):
        keep = torch.bernoulli(torch.full(ids.shape, keep_prob, dtype=torch.float32))
        is_tok = ids != PAD
        return torch.where(is_tok & (keep == 0), torch.full_like(ids, UNK), ids)

    def forward(self, ids, keep_prob=1.0):
        if self.training:
            ids = self.word_dropout(ids, keep_prob)
        mask = (ids != PAD).float()
        e = self.emb(ids) * mask[..., None]
        pooled = e.sum(1) / mask.sum(1, keepdim=True).clamp_min(1.0)
        return self.ff(pooled)


def word_dropout_rate(epoch, base, anneal_epochs):
    return base * (1.0 - epoch / anneal_epochs)


def evaluate(model, ids, labels, bs=512):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(ids), bs):
            correct += (model(ids[i:i + bs]).argmax(-1) == labels[i:i + bs]).sum().item()
    model.train()
    return correct / len(ids)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--word-dropout", type=float, default=0.25)
    p.add_argument("--wd-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)

    vocab, n_intents, max_len = 2000, 12, 24
    tr_ids, tr_y = synth_corpus(4000, vocab, n_intents, max_len, seed=1)
    va_ids, va_y = synth_corpus(1000, vocab, n_intents, max_len, seed=2)

    model = IntentModel(vocab, 64, n_intents)
    fwd = model if args.no_compile else torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    step = 0
    for epoch in range(args.epochs):
        t0, tot, n = time.perf_counter(), 0.0, 0
        perm = torch.randperm(len(tr_ids))
        keep_prob = 1.0 - word_dropout_rate(epoch, args.word_dropout, args.wd_epochs)
        for i in range(0, len(tr_ids), args.batch_size):
            idx = perm[i:i + args.batch_size]
            logits = fwd(tr_ids[idx], keep_prob)
            loss = F.cross_entropy(logits, tr_y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item() * len(idx)
            n += len(idx)
            step += 1
        acc = evaluate(model, va_ids, va_y)
        log.info("epoch %d step %d keep=%.3f train_loss=%.4f val_acc=%.4f (%.1fs)",
                 epoch, step, keep_prob, tot / n, acc, time.perf_counter() - t0)
    print(f"final val_acc={evaluate(model, va_ids, va_y):.4f} after {step} steps")


if __name__ == "__main__":
    main()
