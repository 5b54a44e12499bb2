"""Train a small TextCNN intent classifier for short voice-assistant commands.

    python train_intent_cnn.py            # eager
    python train_intent_cnn.py --compile  # torch.compile
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0
MAX_LEN = 8          # commands are short: "turn off the kitchen lights" etc.
VOCAB = 600
N_INTENTS = 12


def make_commands(n, seed):
    """Synthetic tokenized commands: every intent has a few trigger tokens that
    appear somewhere in the query, the rest is filler."""
    g = torch.Generator().manual_seed(seed)
    triggers = torch.arange(1, 1 + N_INTENTS * 4).view(N_INTENTS, 4)
    ids = torch.full((n, MAX_LEN), PAD, dtype=torch.long)
    labels = torch.randint(0, N_INTENTS, (n,), generator=g)
    lengths = torch.randint(3, MAX_LEN + 1, (n,), generator=g)
    for i in range(n):
        L = int(lengths[i])
        ids[i, :L] = torch.randint(1 + N_INTENTS * 4, VOCAB, (L,), generator=g)
        pos = torch.randint(0, L, (2,), generator=g)
        trig = triggers[labels[i], torch.randint(0, 4, (2,), generator=g)]
        ids[i, pos] = trig
    return ids, labels


class TextCNN(nn.Module):
    def __init__(self, vocab, dim=96, n_filters=128, kernel_sizes=(2, 3, 4), n_classes=N_INTENTS, dropout=0.2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.convs = nn.ModuleList(nn.Conv1d(dim, n_filters, k) for k in kernel_sizes)
        self.dropout = nn.Dropout(dropout)
        self.proj = nn.Linear(n_filters * len(kernel_sizes), n_filters)
        self.head = nn.Linear(n_filters, n_classes)

    def forward(self, ids):
        x = self.embed(ids).transpose(1, 2)          # (B, dim, T)
        pooled = []
        for conv in self.convs:
            h = torch.tanh(conv(x))                  # (B, n_filters, T-k+1)
            pooled.append(torch.amax(h, dim=-1))     # max-over-time
        z = self.dropout(torch.cat(pooled, dim=-1))
        z = F.gelu(self.proj(z))
        return self.head(z)


def evaluate(model, ids, labels, bs=256):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(ids), bs):
            logits = model(ids[i:i + bs])
            correct += (logits.argmax(-1) == labels[i:i + bs]).sum().item()
    model.train()
    return correct / len(ids)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--bs", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    args = ap.parse_args()

    torch.manual_seed(0)
    train_ids, train_y = make_commands(4096, seed=1)
    val_ids, val_y = make_commands(512, seed=2)

    model = TextCNN(VOCAB)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    fwd = torch.compile(model) if args.compile else model

    t0 = time.time()
    g = torch.Generator().manual_seed(3)
    for step in range(1, args.steps + 1):
        idx = torch.randint(0, len(train_ids), (args.bs,), generator=g)
        logits = fwd(train_ids[idx])
        loss = F.cross_entropy(logits, train_y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}  grad_norm {gnorm.item():.3f}  ({time.time() - t0:.1f}s)", flush=True)
        if not math.isfinite(loss.item()):
            print(f"non-finite loss at step {step}, stopping")
            break

    acc = evaluate(fwd, val_ids, val_y)
    print(f"val accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
