"""Intent classifier fine-tuning (tiny BERT, random init for the smoke run).

Usage: python train_intent.py [--no-compile] [--steps N]
"""
import argparse
import logging
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertModel

log = logging.getLogger("intent")
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

PAD_ID, CLS_ID, SEP_ID = 0, 101, 102
VOCAB = 2000
N_LABELS = 6


class IntentModel(nn.Module):
    def __init__(self, cfg, n_labels, pooling="mean", strict_inputs=True):
        super().__init__()
        self.encoder = BertModel(cfg, add_pooling_layer=False)
        self.dropout = nn.Dropout(cfg.hidden_dropout_prob)
        self.head = nn.Linear(cfg.hidden_size, n_labels)
        self.pooling = pooling
        self.strict_inputs = strict_inputs

    def _check_inputs(self, input_ids, attention_mask):
        # The old tokenizer export produced left-padded and sometimes near-empty batches,
        # which silently put [CLS] on a pad position. Fail fast instead of training on garbage.
        n_real = int(attention_mask.sum())
        if n_real < 4 * attention_mask.size(0):
            log.warning("suspiciously short batch: %d real tokens for %d rows", n_real, attention_mask.size(0))
        if not bool((attention_mask[:, 0] == 1).all()):
            raise ValueError("batch contains left-padded rows; expected right padding")

    def forward(self, input_ids, attention_mask, labels=None):
        if self.strict_inputs:
            self._check_inputs(input_ids, attention_mask)
        h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.pooling == "mean":
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        else:
            pooled = h[:, 0]
        logits = self.head(self.dropout(pooled))
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        return loss, logits


def make_dataset(n, seed):
    """Synthetic utterances: each intent has a few 'keyword' tokens mixed into noise."""
    rng = random.Random(seed)
    keywords = {c: [200 + 10 * c + k for k in range(5)] for c in range(N_LABELS)}
    data = []
    for _ in range(n):
        c = rng.randrange(N_LABELS)
        length = rng.randint(6, 30)
        toks = [rng.randrange(300, VOCAB) for _ in range(length)]
        for pos in rng.sample(range(length), 3):
            toks[pos] = rng.choice(keywords[c])
        data.append(([CLS_ID] + toks + [SEP_ID], c))
    return data


def collate(batch, pad_to=32):
    ids = torch.full((len(batch), pad_to), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(batch), pad_to), dtype=torch.long)
    for i, (toks, _) in enumerate(batch):
        toks = toks[:pad_to]
        ids[i, : len(toks)] = torch.tensor(toks)
        mask[i, : len(toks)] = 1
    labels = torch.tensor([c for _, c in batch])
    return ids, mask, labels


def batches(data, bs, shuffle, seed=0):
    idx = list(range(len(data)))
    if shuffle:
        random.Random(seed).shuffle(idx)
    for i in range(0, len(idx) - bs + 1, bs):
        yield collate([data[j] for j in idx[i : i + bs]])


@torch.no_grad()
def evaluate(model, data, bs=32):
    model.eval()
    correct = total = 0
    for ids, mask, labels in batches(data, bs, shuffle=False):
        _, logits = model(ids, mask)
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(total, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64)
    model = IntentModel(cfg, N_LABELS)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    train_data, dev_data = make_dataset(2048, seed=1), make_dataset(256, seed=2)

    # fullgraph=True on purpose: CI should fail loudly if someone introduces a graph break.
    step_model = model if args.no_compile else torch.compile(model, fullgraph=True)

    t0 = time.time()
    step = 0
    while step < args.steps:
        for ids, mask, labels in batches(train_data, 32, shuffle=True, seed=step):
            loss, _ = step_model(ids, mask, labels)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % 10 == 0:
                log.info("step %d loss %.4f (%.1fs)", step, loss.item(), time.time() - t0)
            if step >= args.steps:
                break
    acc = evaluate(step_model, dev_data)
    log.info("dev accuracy %.3f  total %.1fs", acc, time.time() - t0)


if __name__ == "__main__":
    main()
