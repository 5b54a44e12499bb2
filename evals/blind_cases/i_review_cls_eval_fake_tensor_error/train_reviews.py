"""Review sentiment classifier: small transformer encoder with learned positions.

Train for a few steps on bucketed batches (eager), then score the dev split with a
compiled copy of the model (scoring runs over the full review dump nightly, so that is
the part we compile).
"""
import argparse
import math
import random
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 6000
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 256
    max_positions: int = 256
    n_classes: int = 3
    dropout: float = 0.1


@dataclass
class DataConfig:
    max_tokens: int = 320          # truncate reviews longer than this
    pad_multiple: int = 32         # pad batch length to a multiple of this (fewer shapes to compile)
    batch_size: int = 16


class ReviewEncoder(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, cfg.max_positions, cfg.d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.dropout,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.n_classes)

    def forward(self, input_ids, attention_mask):
        T = input_ids.shape[1]
        h = self.tok(input_ids) + self.pos[:, :T]
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        h = self.norm(h)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def synth_split(n, seed, long_tail):
    rng = random.Random(seed)
    docs = []
    for _ in range(n):
        if long_tail and rng.random() < 0.08:
            length = rng.randint(260, 400)
        else:
            length = int(min(240, max(12, rng.lognormvariate(4.2, 0.5))))
        label = rng.randrange(3)
        base = 100 + 1000 * label
        ids = [rng.randrange(base, base + 1500) if rng.random() < 0.3 else rng.randrange(1, 6000)
               for _ in range(length)]
        docs.append((ids, label))
    return docs


def collate(batch, dcfg: DataConfig):
    seqs = [ids[: dcfg.max_tokens] for ids, _ in batch]
    longest = max(len(s) for s in seqs)
    T = int(math.ceil(longest / dcfg.pad_multiple) * dcfg.pad_multiple)
    input_ids = torch.zeros(len(seqs), T, dtype=torch.long)
    attention_mask = torch.zeros(len(seqs), T, dtype=torch.long)
    for i, s in enumerate(seqs):
        input_ids[i, : len(s)] = torch.tensor(s)
        attention_mask[i, : len(s)] = 1
    labels = torch.tensor([y for _, y in batch])
    return input_ids, attention_mask, labels


def batches(docs, dcfg, shuffle, seed=0):
    order = list(range(len(docs)))
    if shuffle:
        random.Random(seed).shuffle(order)
    else:
        order.sort(key=lambda i: len(docs[i][0]))   # length-sorted eval = less padding
    for s in range(0, len(order), dcfg.batch_size):
        yield collate([docs[i] for i in order[s: s + dcfg.batch_size]], dcfg)


def train(model, train_docs, dcfg, steps, lr):
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    model.train()
    step, t0 = 0, time.perf_counter()
    while step < steps:
        for input_ids, attention_mask, labels in batches(train_docs, dcfg, shuffle=True, seed=step):
            logits = model(input_ids, attention_mask)
            loss = F.cross_entropy(logits, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            if step % 10 == 0:
                print(f"step {step:4d} | loss {loss.item():.4f} | T={input_ids.shape[1]} | {time.perf_counter() - t0:.1f}s")
            if step >= steps:
                break


@torch.no_grad()
def evaluate(model, score_fn, docs, dcfg, max_batches=None):
    model.eval()
    correct = total = 0
    for b, (input_ids, attention_mask, labels) in enumerate(batches(docs, dcfg, shuffle=False)):
        if max_batches is not None and b >= max_batches:
            break
        pred = score_fn(input_ids, attention_mask).argmax(-1)
        correct += (pred == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(total, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--max-eval-batches", type=int, default=None)
    args = ap.parse_args()

    torch.manual_seed(0)
    mcfg, dcfg = ModelConfig(), DataConfig()
    train_docs = synth_split(600, seed=1, long_tail=False)
    dev_docs = synth_split(200, seed=2, long_tail=True)

    model = ReviewEncoder(mcfg)
    train(model, train_docs, dcfg, args.steps, args.lr)

    score_fn = model if args.no_compile else torch.compile(model)
    t0 = time.perf_counter()
    acc = evaluate(model, score_fn, dev_docs, dcfg, args.max_eval_batches)
    print(f"scored dev split in {time.perf_counter() - t0:.1f}s")
    print(f"dev accuracy: {acc:.3f}")


if __name__ == "__main__":
    main()
