"""Train the support-ticket router (BiLSTM) and export it for the serving fleet.

Usage:
    python export_router.py --steps 60 --out artifacts/router.pt2
"""
import argparse
import logging
import os
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim
from torch.nn.utils.rnn import pack_padded_sequence

log = logging.getLogger("router")

QUEUES = ["billing", "login", "shipping", "refund", "bug"]
KEYWORDS = {
    "billing": ["invoice", "charged", "card", "payment", "vat"],
    "login": ["password", "2fa", "locked", "sso", "reset"],
    "shipping": ["parcel", "courier", "tracking", "delayed", "address"],
    "refund": ["refund", "return", "money", "cancel", "back"],
    "bug": ["crash", "error", "broken", "blank", "freeze"],
}
FILLER = ["hi", "please", "my", "the", "is", "not", "help", "since", "today", "order", "account", "thanks"]
PAD_ID, UNK_ID = 0, 1


class HashVocab:
    """Fixed-size hashing vocabulary, same as the serving tokenizer."""

    def __init__(self, size=2048):
        self.size = size

    def encode(self, text, max_len):
        ids = [2 + (sum(ord(c) * 31 ** i for i, c in enumerate(w)) % (self.size - 2)) for w in text.lower().split()]
        return ids[:max_len] or [UNK_ID]


def make_tickets(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.randrange(len(QUEUES))
        words = rng.sample(FILLER, rng.randint(1, 8)) + rng.sample(KEYWORDS[QUEUES[label]], rng.randint(1, 3))
        rng.shuffle(words)
        out.append((" ".join(words), label))
    return out


def collate(batch, vocab, max_len):
    enc = [vocab.encode(t, max_len) for t, _ in batch]
    lengths = torch.tensor([len(e) for e in enc], dtype=torch.long)
    ids = torch.full((len(enc), int(lengths.max())), PAD_ID, dtype=torch.long)
    for i, e in enumerate(enc):
        ids[i, : len(e)] = torch.tensor(e)
    labels = torch.tensor([y for _, y in batch], dtype=torch.long)
    return ids, lengths, labels


class TicketRouter(nn.Module):
    def __init__(self, vocab_size, emb=64, hidden=96, n_classes=len(QUEUES), dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=PAD_ID)
        self.encoder = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.GELU(), nn.Linear(hidden, n_classes))

    def forward(self, ids, lengths):
        x = self.drop(self.embed(ids))
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h_n, _) = self.encoder(packed)
        sent = torch.cat([h_n[-2], h_n[-1]], dim=-1)
        return self.head(self.drop(sent))


def train(model, data, vocab, args):
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    model.train()
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        batch = random.sample(data, args.batch_size)
        ids, lengths, labels = collate(batch, vocab, args.max_len)
        loss = F.cross_entropy(model(ids, lengths), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 20 == 0 or step == 1:
            log.info("step %4d  loss %.4f  (%.1fs)", step, loss.item(), time.perf_counter() - t0)


@torch.no_grad()
def evaluate(model, data, vocab, args):
    model.eval()
    correct = 0
    for i in range(0, len(data), args.batch_size):
        ids, lengths, labels = collate(data[i : i + args.batch_size], vocab, args.max_len)
        correct += (model(ids, lengths).argmax(-1) == labels).sum().item()
    return correct / len(data)


def export_for_serving(model, vocab, val, args):
    model.eval()
    ids, lengths, _ = collate(val[: args.batch_size], vocab, args.max_len)
    batch = Dim("batch", min=1, max=256)
    seq = Dim("seq", min=2, max=args.max_len)
    log.info("exporting with example ids %s, lengths %s", tuple(ids.shape), lengths.tolist()[:8])
    ep = torch.export.export(
        model,
        (ids, lengths),
        dynamic_shapes={"ids": {0: batch, 1: seq}, "lengths": {0: batch}},
    )
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.export.save(ep, args.out)
    log.info("saved %s", args.out)

    # parity check on a few held-out batches, the same check the serving CI runs
    served = torch.export.load(args.out).module()
    worst = 0.0
    for i in range(0, 4 * args.batch_size, args.batch_size):
        ids, lengths, _ = collate(val[i : i + args.batch_size], vocab, args.max_len)
        with torch.no_grad():
            worst = max(worst, (served(ids, lengths) - model(ids, lengths)).abs().max().item())
    log.info("exported-vs-eager max |diff| = %.3g", worst)
    if worst > 1e-4:
        raise SystemExit("parity check failed")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-len", type=int, default=24)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="artifacts/router.pt2")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    vocab = HashVocab()
    train_set, val_set = make_tickets(2000, seed=1), make_tickets(400, seed=2)
    model = TicketRouter(vocab.size)
    log.info("params: %.2fM  torch %s", sum(p.numel() for p in model.parameters()) / 1e6, torch.__version__)

    train(model, train_set, vocab, args)
    log.info("val accuracy: %.3f", evaluate(model, val_set, vocab, args))
    export_for_serving(model, vocab, val_set, args)


if __name__ == "__main__":
    main()
