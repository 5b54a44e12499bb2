import argparse
import copy
import math
import random
import time
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 2000
MAX_LEN = 32
NUM_INTENTS = 6
INTENT_NAMES = ["greet", "order", "refund", "cancel", "complaint", "fraud_report"]
# long-tailed intent distribution, like our production logs
INTENT_PRIOR = [0.40, 0.30, 0.15, 0.09, 0.05, 0.01]


def make_corpus(n, seed):
    g = random.Random(seed)
    samples = []
    for _ in range(n):
        y = g.choices(range(NUM_INTENTS), weights=INTENT_PRIOR)[0]
        length = g.randint(6, MAX_LEN)
        base = 50 + y * 300
        toks = [g.randint(base, base + 299) if g.random() < 0.35 else g.randint(1, VOCAB - 1)
                for _ in range(length)]
        samples.append((toks, y))
    return samples


def collate(batch):
    ids = torch.zeros(len(batch), MAX_LEN, dtype=torch.long)
    mask = torch.zeros(len(batch), MAX_LEN)
    for i, (toks, _) in enumerate(batch):
        ids[i, :len(toks)] = torch.tensor(toks)
        mask[i, :len(toks)] = 1.0
    labels = torch.tensor([y for _, y in batch])
    return ids, mask, labels


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad, need_weights=False)
        x = x + a
        return x + self.ff(self.ln2(x))


class IntentClassifier(nn.Module):
    def __init__(self, class_freq, d=64, heads=4, layers=1, smoothing=1.0, beta=1.0):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(MAX_LEN, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, NUM_INTENTS)
        # raw label counts from the training split, kept for logging / re-weighting
        self.class_freq = class_freq
        self.smoothing = smoothing
        self.beta = beta

    def class_weights(self):
        freq = copy.copy(self.class_freq)  # don't touch the logged counts
        for c in range(NUM_INTENTS):
            freq[c] += self.smoothing
        total = sum(freq.values())
        w = [(total / (NUM_INTENTS * freq[c])) ** self.beta for c in range(NUM_INTENTS)]
        w = torch.tensor(w)
        return w / w.mean()

    def forward(self, ids, mask, labels=None):
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(pos)[None]
        pad = mask == 0
        for blk in self.blocks:
            x = blk(x, pad)
        x = self.ln(x)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp_min(1.0)
        logits = self.head(pooled)
        if labels is None:
            return logits, None
        loss = F.cross_entropy(logits, labels, weight=self.class_weights())
        return logits, loss


@torch.no_grad()
def evaluate(model, data, bs=128):
    model.eval()
    tp = [0] * NUM_INTENTS
    cnt = [0] * NUM_INTENTS
    correct = 0
    for i in range(0, len(data), bs):
        ids, mask, labels = collate(data[i:i + bs])
        logits, _ = model(ids, mask)
        pred = logits.argmax(-1)
        correct += (pred == labels).sum().item()
        for c in range(NUM_INTENTS):
            sel = labels == c
            cnt[c] += sel.sum().item()
            tp[c] += (pred[sel] == c).sum().item()
    model.train()
    recall = [tp[c] / max(cnt[c], 1) for c in range(NUM_INTENTS)]
    return correct / len(data), recall


def run(compile_model, steps, seed=0, bs=64):
    torch.manual_seed(seed)
    train = make_corpus(4000, seed=1)
    dev = make_corpus(1200, seed=2)
    class_freq = Counter(y for _, y in train)
    model = IntentClassifier(class_freq)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    fwd = torch.compile(model) if compile_model else model
    g = random.Random(seed)
    order = list(range(len(train)))
    t0 = time.time()
    first_loss = None
    for step in range(steps):
        if step % (len(train) // bs) == 0:
            g.shuffle(order)
        j = (step % (len(train) // bs)) * bs
        ids, mask, labels = collate([train[k] for k in order[j:j + bs]])
        _, loss = fwd(ids, mask, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if first_loss is None:
            first_loss = loss.item()
            print(f"[{'compiled' if compile_model else 'eager   '}] step 0 loss {first_loss:.4f} "
                  f"(first step {time.time() - t0:.1f}s)")
        if (step + 1) % 50 == 0:
            print(f"[{'compiled' if compile_model else 'eager   '}] step {step + 1} loss {loss.item():.4f}")
    acc, recall = evaluate(model, dev)
    tail = sum(recall[3:]) / 3
    print(f"[{'compiled' if compile_model else 'eager   '}] dev acc {acc:.3f}  tail-intent recall {tail:.3f}  "
          + " ".join(f"{n}={r:.2f}" for n, r in zip(INTENT_NAMES, recall)))
    return first_loss, acc, tail


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--mode", choices=["eager", "compiled", "both"], default="both")
    args = p.parse_args()
    res = {}
    if args.mode in ("eager", "both"):
        res["eager"] = run(False, args.steps)
    if args.mode in ("compiled", "both"):
        res["compiled"] = run(True, args.steps)
    if len(res) == 2:
        d = abs(res["eager"][0] - res["compiled"][0])
        print(f"step-0 loss |eager - compiled| = {d:.4f}")
        if d > 1e-3:
            print("MISMATCH: compiled training does not match eager")
