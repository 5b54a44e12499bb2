"""Keyword spotting on two corpora (in-house far-field + public near-field).

    python train_kws.py --compile
"""
import argparse
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_MELS = 40
N_KEYWORDS = 12


class FeatureStore:
    """Pre-extracted log-mel features. `layout` is how the extractor wrote them to disk."""

    def __init__(self, name, n_utts, layout, seed):
        g = torch.Generator().manual_seed(seed)
        self.name, self.layout = name, layout
        self.lengths = torch.randint(60, 160, (n_utts,), generator=g).tolist()
        self.labels = torch.randint(0, N_KEYWORDS, (n_utts,), generator=g).tolist()
        self.seed = seed

    def batches(self, batch_size, bucket=20):
        idx = list(range(len(self.lengths)))
        random.Random(self.seed).shuffle(idx)
        for i in range(0, len(idx), batch_size):
            chunk = idx[i:i + batch_size]
            t = max(self.lengths[j] for j in chunk)
            t = (t + bucket - 1) // bucket * bucket
            if self.layout == "frames_first":      # kaldi-style ark: (T, F) per utterance
                feats = torch.randn(len(chunk), t, N_MELS)
            else:                                  # torchaudio-style: (F, T) per utterance
                feats = torch.randn(len(chunk), N_MELS, t)
            yield feats, torch.tensor([self.labels[j] for j in chunk])


def to_model_layout(feats, layout):
    if layout == "frames_first":
        return feats.transpose(1, 2)      # -> (B, F, T)
    return feats


class DSConv(nn.Module):
    def __init__(self, ch, k, dilation):
        super().__init__()
        self.dw = nn.Conv1d(ch, ch, k, padding=dilation * (k // 2), dilation=dilation, groups=ch)
        self.pw = nn.Conv1d(ch, ch, 1)
        self.bn = nn.BatchNorm1d(ch)

    def forward(self, x):
        return x + F.relu(self.bn(self.pw(self.dw(x))))


class KWSNet(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.inp = nn.Conv1d(N_MELS, ch, 3, padding=1)
        self.body = nn.Sequential(*[DSConv(ch, 5, d) for d in (1, 2, 4, 8)])
        self.out = nn.Linear(ch, N_KEYWORDS)

    def forward(self, feats):
        x = F.relu(self.inp(feats))
        x = self.body(x)
        return self.out(x.mean(-1))


def interleave(stores, batch_size):
    iters = [(s, s.batches(batch_size)) for s in stores]
    while iters:
        for pair in list(iters):
            s, it = pair
            try:
                feats, y = next(it)
            except StopIteration:
                iters.remove(pair)
                continue
            yield s.layout, feats, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)

    stores = [FeatureStore("farfield_inhouse", 700, "frames_first", 1),
              FeatureStore("speech_commands", 700, "mels_first", 2)]
    model = KWSNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    fwd = torch.compile(model) if args.compile else model

    step, t_start = 0, time.time()
    for epoch in range(args.epochs):
        t_win = time.time()
        for layout, feats, y in interleave(stores, args.bs):
            x = to_model_layout(feats, layout)
            loss = F.cross_entropy(fwd(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % 10 == 0:
                print(f"step {step:4d} loss {loss.item():.4f}  {(time.time() - t_win) / 10 * 1000:.0f} ms/step")
                t_win = time.time()
    print(f"done: {step} steps in {time.time() - t_start:.1f}s")


if __name__ == "__main__":
    main()
