"""Kim-style TextCNN for support-ticket intent classification.

Batches are padded to the longest ticket in the batch (rounded up to a multiple
of 16), so the sequence length changes from batch to batch.  The model is
compiled once with dynamic=True so new lengths should not need new graphs.
"""
import argparse
import logging
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("textcnn")

PAD_ID = 0
NUM_INTENTS = 12


class SyntheticTickets(Dataset):
    """Token-id sequences of varying length with a weakly learnable label."""

    def __init__(self, n, vocab, min_len, max_len, seed):
        g = random.Random(seed)
        self.items = []
        for _ in range(n):
            # ticket lengths are long-tailed: most are short, a few are long
            length = min(max_len, max(min_len, int(g.lognormvariate(3.0, 0.6))))
            label = g.randrange(NUM_INTENTS)
            ids = [g.randrange(2, vocab) for _ in range(length)]
            # plant a few label-specific "keywords"
            for k in range(3):
                ids[g.randrange(length)] = 2 + label * 7 + k
            self.items.append((ids, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch, multiple=32):
    longest = max(len(ids) for ids, _ in batch)
    padded_len = ((longest + multiple - 1) // multiple) * multiple
    ids = torch.full((len(batch), padded_len), PAD_ID, dtype=torch.long)
    for row, (seq, _) in enumerate(batch):
        ids[row, : len(seq)] = torch.tensor(seq)
    labels = torch.tensor([lab for _, lab in batch])
    return ids, labels


class TextCNN(nn.Module):
    def __init__(self, vocab, dim=128, widths=(3, 4, 5), channels=128, dropout=0.3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD_ID)
        self.convs = nn.ModuleList(
            [nn.Conv1d(dim, channels, w, padding=w // 2) for w in widths]
        )
        self.norm = nn.LayerNorm(channels * len(widths))
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(channels * len(widths), NUM_INTENTS)

    def forward(self, ids):
        x = self.embed(ids).transpose(1, 2)  # (B, dim, L)
        pooled = []
        for conv in self.convs:
            h = F.relu(conv(x))
            h = F.max_pool1d(h, h.size(2)).squeeze(2)
            pooled.append(h)
        z = self.norm(torch.cat(pooled, dim=1))
        return self.head(self.drop(z))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--train-size", type=int, default=384)
    p.add_argument("--vocab", type=int, default=5000)
    p.add_argument("--min-len", type=int, default=8)
    p.add_argument("--max-len", type=int, default=96)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.manual_seed(args.seed)

    data = SyntheticTickets(args.train_size, args.vocab, args.min_len, args.max_len, args.seed)
    loader = DataLoader(
        data,
        batch_size=args.batch_size,
        shuffle=True,
        collate_fn=collate,
        generator=torch.Generator().manual_seed(args.seed),
    )

    model = TextCNN(args.vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step_fn = model if args.no_compile else torch.compile(model, dynamic=True)

    from torch._dynamo.utils import counters

    seen_lengths = set()
    for epoch in range(args.epochs):
        model.train()
        t_epoch = time.perf_counter()
        slow_steps = []
        total, correct, loss_sum = 0, 0, 0.0
        for step, (ids, labels) in enumerate(loader):
            t0 = time.perf_counter()
            logits = step_fn(ids)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            dt = time.perf_counter() - t0
            if dt > 1.0:
                slow_steps.append((step, ids.shape[1], round(dt, 1)))
            seen_lengths.add(ids.shape[1])
            loss_sum += loss.item() * labels.numel()
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
        log.info(
            "epoch %d loss %.4f acc %.3f time %.1fs slow steps (step, len, s): %s",
            epoch, loss_sum / total, correct / total,
            time.perf_counter() - t_epoch, slow_steps,
        )

    log.info("distinct padded lengths seen: %s", sorted(seen_lengths))
    if not args.no_compile:
        log.info("frames compiled: %d", counters["stats"]["unique_graphs"])


if __name__ == "__main__":
    main()
