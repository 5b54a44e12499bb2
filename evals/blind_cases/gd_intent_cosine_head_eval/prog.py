"""Intent classifier with a cosine (prototype) head.

Trains a small bag-of-ngrams encoder on a synthetic intent corpus and
evaluates after every epoch. Evaluation goes through a torch.compile'd
view of the same model so the numbers match what the serving path runs.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 3000
N_INTENTS = 12
SEQ = 24


def make_corpus(n, seed):
    g = torch.Generator().manual_seed(seed)
    # every intent owns a handful of "keyword" tokens; the rest is noise
    keywords = torch.randint(10, VOCAB, (N_INTENTS, 6), generator=torch.Generator().manual_seed(1234))
    labels = torch.randint(0, N_INTENTS, (n,), generator=g)
    toks = torch.randint(10, VOCAB, (n, SEQ), generator=g)
    n_kw = torch.randint(3, 7, (n,), generator=g)
    for i in range(n):
        pos = torch.randperm(SEQ, generator=g)[: n_kw[i]]
        pick = torch.randint(0, 6, (int(n_kw[i]),), generator=g)
        toks[i, pos] = keywords[labels[i], pick]
    lengths = torch.randint(SEQ // 2, SEQ + 1, (n,), generator=g)
    mask = torch.arange(SEQ)[None, :] < lengths[:, None]
    toks = toks.masked_fill(~mask, 0)
    return toks, mask, labels


class CosineHead(nn.Module):
    def __init__(self, dim, n_classes, scale=16.0):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_classes, dim) * 0.05)
        self.scale = scale
        self._proto = None
        self._proto_version = -1

    def prototypes(self):
        if self.training:
            return F.normalize(self.weight, dim=-1)
        # eval: reuse the normalized prototypes until the weights change
        if self._proto_version != self.weight._version:
            with torch.no_grad():
                self._proto = F.normalize(self.weight, dim=-1)
            self._proto_version = self.weight._version
        return self._proto

    def forward(self, h):
        h = F.normalize(h, dim=-1)
        return self.scale * h @ self.prototypes().t()


class IntentModel(nn.Module):
    def __init__(self, dim=96):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.mix = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.norm = nn.LayerNorm(dim)
        self.head = CosineHead(dim, N_INTENTS)

    def forward(self, toks, mask):
        e = self.emb(toks)
        m = mask.unsqueeze(-1).to(e.dtype)
        pooled = (e * m).sum(1) / m.sum(1).clamp_min(1.0)
        h = self.norm(pooled + self.mix(pooled))
        return self.head(h)


@torch.no_grad()
def evaluate(fn, model, data, bs=256):
    model.eval()
    toks, mask, labels = data
    correct, loss_sum = 0, 0.0
    for i in range(0, toks.shape[0], bs):
        logits = fn(toks[i:i + bs], mask[i:i + bs])
        loss_sum += F.cross_entropy(logits, labels[i:i + bs], reduction="sum").item()
        correct += (logits.argmax(-1) == labels[i:i + bs]).sum().item()
    model.train()
    n = toks.shape[0]
    return correct / n, loss_sum / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    train = make_corpus(2048, seed=1)
    val = make_corpus(512, seed=2)

    model = IntentModel()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    eval_fn = model if args.no_compile else torch.compile(model)

    bs = 64
    steps_per_epoch = train[0].shape[0] // bs
    total = steps_per_epoch * args.epochs
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))

    t0 = time.time()
    acc0, vloss0 = evaluate(eval_fn, model, val)
    print(f"epoch 0: val_loss={vloss0:.4f} val_acc={acc0:.4f}")
    history = []
    for epoch in range(args.epochs):
        perm = torch.randperm(train[0].shape[0])
        run_loss = 0.0
        for s in range(steps_per_epoch):
            idx = perm[s * bs:(s + 1) * bs]
            logits = model(train[0][idx], train[1][idx])
            loss = F.cross_entropy(logits, train[2][idx], label_smoothing=0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            run_loss += loss.item()
        acc, vloss = evaluate(eval_fn, model, val)
        history.append(acc)
        print(f"epoch {epoch + 1}: train_loss={run_loss / steps_per_epoch:.4f} "
              f"val_loss={vloss:.4f} val_acc={acc:.4f}")

    print(f"best val_acc={max(history):.4f} final val_acc={history[-1]:.4f} "
          f"wall={time.time() - t0:.1f}s")
    if history[-1] < 0.80:
        raise SystemExit("FAIL: final validation accuracy below 0.80")
    print("OK")


if __name__ == "__main__":
    main()
