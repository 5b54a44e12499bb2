"""Simulated int8 (fake-quant) evaluation of the intent classifier before we ship
the int8 build to the edge boxes.

Activation scales are calibrated per batch with a percentile clip (numpy), wrapped
as a torch.library custom op so that torch.compile does not try to trace numpy.
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------------------
# calibration op
# --------------------------------------------------------------------------------------
@torch.library.custom_op("edgeq::percentile_scale", mutates_args=())
def percentile_scale(x: torch.Tensor, pct: float, qmax: int) -> float:
    a = x.detach().abs().float().cpu().numpy().reshape(-1)
    clip = float(np.percentile(a, pct))
    return max(clip, 1e-8) / qmax


@percentile_scale.register_fake
def _percentile_scale_fake(x, pct, qmax):
    # only metadata is needed while tracing
    return 1.0


def fake_quant(x: torch.Tensor, scale, qmax: int) -> torch.Tensor:
    q = torch.clamp(torch.round(x / scale), -qmax, qmax)
    return q * scale


# --------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------
class QuantLinear(nn.Module):
    def __init__(self, d_in, d_out, pct=99.9, bits=8):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)
        self.pct = pct
        self.qmax = 2 ** (bits - 1) - 1
        self.quantize = True

    def forward(self, x):
        if self.quantize:
            s = percentile_scale(x, self.pct, self.qmax)
            x = fake_quant(x, s, self.qmax)
        return self.fc(x)


class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = QuantLinear(d, hidden)
        self.down = QuantLinear(hidden, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class IntentClassifier(nn.Module):
    def __init__(self, vocab=2000, d=128, hidden=256, n_blocks=3, n_classes=12):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, d, mode="mean")
        self.blocks = nn.ModuleList([Block(d, hidden) for _ in range(n_blocks)])
        self.head = QuantLinear(d, n_classes)

    def set_quantize(self, on: bool):
        for m in self.modules():
            if isinstance(m, QuantLinear):
                m.quantize = on

    def forward(self, ids, offsets):
        h = self.emb(ids, offsets)
        for b in self.blocks:
            h = b(h)
        return self.head(h)


# --------------------------------------------------------------------------------------
# synthetic data: each intent has a set of keyword ids
# --------------------------------------------------------------------------------------
def make_dataset(n, vocab=2000, n_classes=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    kw = torch.randint(0, vocab, (n_classes, 20), generator=torch.Generator().manual_seed(123))
    labels = torch.randint(0, n_classes, (n,), generator=g)
    seqs = []
    for y in labels.tolist():
        L = int(torch.randint(6, 24, (1,), generator=g))
        n_kw = max(2, L // 3)
        k = kw[y][torch.randint(0, 20, (n_kw,), generator=g)]
        noise = torch.randint(0, vocab, (L - n_kw,), generator=g)
        seqs.append(torch.cat([k, noise])[torch.randperm(L, generator=g)])
    return seqs, labels


def batches(seqs, labels, bs):
    for i in range(0, len(seqs), bs):
        chunk = seqs[i:i + bs]
        offsets = torch.tensor([0] + [len(s) for s in chunk[:-1]]).cumsum(0)
        yield torch.cat(chunk), offsets, labels[i:i + bs]


def train(model, seqs, labels, epochs=3, bs=64):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    model.set_quantize(False)
    for ep in range(epochs):
        tot = 0.0
        for ids, off, y in batches(seqs, labels, bs):
            loss = F.cross_entropy(model(ids, off), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += loss.item()
        print(f"epoch {ep} train loss {tot / (len(seqs) / bs):.4f}")


@torch.no_grad()
def evaluate(fn, seqs, labels, bs=128):
    correct, n, logits_all = 0, 0, []
    for ids, off, y in batches(seqs, labels, bs):
        logits = fn(ids, off)
        logits_all.append(logits)
        correct += (logits.argmax(-1) == y).sum().item()
        n += y.numel()
    return correct / n, torch.cat(logits_all)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    tr_x, tr_y = make_dataset(4000, seed=1)
    te_x, te_y = make_dataset(1024, seed=2)

    model = IntentClassifier()
    train(model, tr_x, tr_y)
    model.eval()

    model.set_quantize(False)
    fp32_acc, fp32_logits = evaluate(model, te_x, te_y)
    print(f"fp32 eager accuracy        : {fp32_acc:.4f}")

    model.set_quantize(True)
    q_acc, q_logits = evaluate(model, te_x, te_y)
    print(f"int8-sim eager accuracy    : {q_acc:.4f}")

    if args.compile:
        cmodel = torch.compile(model)
        t0 = time.time()
        c_acc, c_logits = evaluate(cmodel, te_x, te_y)
        print(f"int8-sim compiled accuracy : {c_acc:.4f}   ({time.time() - t0:.1f}s incl. compile)")
        print(f"max |compiled - eager| logits: {(c_logits - q_logits).abs().max().item():.4f}")


if __name__ == "__main__":
    main()
