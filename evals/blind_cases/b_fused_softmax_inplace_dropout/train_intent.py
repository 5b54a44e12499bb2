"""Intent classifier training (small transformer encoder), CPU smoke run.

    python train_intent.py               # torch.compile (default, what CI runs)
    python train_intent.py --no-compile  # eager
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from fused_softmax import scaled_masked_softmax


class SelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, attn_dropout):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(attn_dropout, inplace=True)

    def forward(self, x, pad_mask):
        B, T, D = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1)
        probs = scaled_masked_softmax(scores, pad_mask, 1.0 / math.sqrt(self.head_dim))
        probs = self.attn_drop(probs)
        out = (probs @ v).transpose(1, 2).reshape(B, T, D)
        return self.proj(out)


class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, ff, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads, dropout)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, ff), nn.GELU(), nn.Linear(ff, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, x, pad_mask):
        x = x + self.drop(self.attn(self.ln1(x), pad_mask))
        return x + self.drop(self.ff(self.ln2(x)))


class IntentClassifier(nn.Module):
    def __init__(self, vocab=2000, d_model=64, n_heads=4, ff=128, layers=2, n_intents=12, max_len=48, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList([EncoderLayer(d_model, n_heads, ff, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_intents)

    def forward(self, ids):
        pad = ids.eq(0)
        pad_mask = pad[:, None, None, :]
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None]
        for layer in self.layers:
            x = layer(x, pad_mask)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (self.ln(x) * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


def synthetic_batches(n_batches, batch=32, max_len=48, vocab=2000, n_intents=12, seed=0):
    # each intent has a few trigger tokens; sentences are noise + triggers
    triggers = torch.randint(1, vocab, (n_intents, 3), generator=torch.Generator().manual_seed(1234))
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        labels = torch.randint(0, n_intents, (batch,), generator=g)
        lengths = torch.randint(8, max_len + 1, (batch,), generator=g)
        ids = torch.randint(1, vocab, (batch, max_len), generator=g)
        pos = torch.randint(0, 8, (batch, 3), generator=g)
        ids.scatter_(1, pos, triggers[labels])
        ids[torch.arange(max_len)[None, :] >= lengths[:, None]] = 0
        yield ids, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = IntentClassifier()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    fwd = model if args.no_compile else torch.compile(model)

    t0 = time.perf_counter()
    for step, (ids, labels) in enumerate(synthetic_batches(args.steps), 1):
        model.train()
        loss = F.cross_entropy(fwd(ids), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step == 1 or step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}  grad_norm {gnorm.item():.3f}  ({time.perf_counter() - t0:.1f}s)")

    model.eval()
    correct = total = 0
    with torch.no_grad():
        for ids, labels in synthetic_batches(8, seed=123):
            correct += (fwd(ids).argmax(-1) == labels).sum().item()
            total += labels.numel()
    print(f"held-out accuracy {correct / total:.3f}")


if __name__ == "__main__":
    main()
