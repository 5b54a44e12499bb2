"""Train a small Transformer encoder intent classifier on synthetic token data.

usage: python train.py [--compile] [--fullgraph] [--trace] [--steps N]
--trace prints per-block activation magnitudes (we watch these for blow-ups).
"""
import argparse
import time

import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F

# keep the activation printouts from splitting the compiled graph
torch._dynamo.config.reorderable_logging_functions.add(print)


class EncoderBlock(nn.Module):
    def __init__(self, d, heads, name, trace):
        super().__init__()
        self.name, self.trace = name, trace
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + a
        x = x + self.ff(self.ln2(x))
        if self.trace:
            print(f"[{self.name}]", x.shape, x.detach().abs().amax(), flush=True)
        return x


class IntentClassifier(nn.Module):
    def __init__(self, vocab=8000, d=192, heads=4, layers=4, n_classes=24, max_len=128, trace=False):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d))
        self.blocks = nn.ModuleList(EncoderBlock(d, heads, f"block{i}", trace) for i in range(layers))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_classes)
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, ids):
        pad_mask = ids == 0
        x = self.emb(ids) + self.pos[:, : ids.size(1)]
        for blk in self.blocks:
            x = blk(x, pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        pooled = (self.norm(x) * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        return self.head(pooled)


def make_batches(n, batch, seq, vocab, n_classes, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ids = torch.randint(1, vocab, (batch, seq), generator=g)
        lens = torch.randint(seq // 2, seq + 1, (batch,), generator=g)
        ids[torch.arange(seq)[None, :] >= lens[:, None]] = 0
        labels = ids[:, 0] % n_classes
        out.append((ids, labels))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--fullgraph", action="store_true")
    p.add_argument("--trace", action="store_true")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=64)
    args = p.parse_args()
    torch.manual_seed(0)

    model = IntentClassifier(trace=args.trace)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    batches = make_batches(args.steps, args.batch, args.seq, 8000, 24, seed=1)

    fwd = model
    if args.compile:
        fwd = torch.compile(model, fullgraph=args.fullgraph)

    model.train()
    times = []
    for step, (ids, labels) in enumerate(batches):
        t0 = time.perf_counter()
        loss = F.cross_entropy(fwd(ids), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == len(batches) - 1:
            print(f"step {step:3d} loss {loss.item():.4f} step_time {times[-1] * 1e3:.1f} ms", flush=True)
    steady = sorted(times[5:])[len(times[5:]) // 2]
    print(f"first step {times[0]:.2f}s, median step after warm-up {steady * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
