"""Compile-stability CI gate for the residue contact-map predictor.

Runs a short training smoke test over the crop-length buckets we use in
production and checks that torch.compile captured the training loss once
(dynamic=True) instead of once per crop length.
"""
import argparse
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

AA = "ACDEFGHIKLMNPQRSTVWY"
PAD = len(AA)
CONTACT_CUTOFF = 8.0      # Angstrom, C-alpha
MIN_SEP = 6               # ignore local (|i-j| < 6) pairs in the loss
LONG_RANGE_SEP = 24


def synth_protein(length, gen):
    """Random C-alpha trace (3.8 A steps, persistence) and its sequence."""
    steps = torch.randn(length, 3, generator=gen)
    for t in range(1, length):
        steps[t] = 0.7 * steps[t - 1] + 0.3 * steps[t]
    steps = 3.8 * steps / steps.norm(dim=-1, keepdim=True)
    coords = steps.cumsum(0)
    seq = torch.randint(0, len(AA), (length,), generator=gen)
    dist = torch.cdist(coords, coords)
    contacts = (dist < CONTACT_CUTOFF).float()
    return seq, contacts


def make_batch(batch_size, length, gen):
    seqs, maps = zip(*(synth_protein(length, gen) for _ in range(batch_size)))
    return torch.stack(seqs), torch.stack(maps)


class ResBlock1d(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, 5, padding=2 * dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, dim)

    def forward(self, x):
        return x + F.gelu(self.norm(self.conv(x)))


class ResBlock2d(nn.Module):
    def __init__(self, dim, dilation):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=dilation, dilation=dilation)
        self.norm = nn.GroupNorm(4, dim)

    def forward(self, x):
        return x + F.elu(self.norm(self.conv(x)))


class ContactNet(nn.Module):
    def __init__(self, seq_dim=48, pair_dim=20, n1d=3, n2d=4):
        super().__init__()
        self.embed = nn.Embedding(len(AA) + 1, seq_dim, padding_idx=PAD)
        self.seq_blocks = nn.Sequential(*[ResBlock1d(seq_dim, 2 ** i) for i in range(n1d)])
        self.left = nn.Linear(seq_dim, pair_dim)
        self.right = nn.Linear(seq_dim, pair_dim)
        self.pos_bins = 33
        self.rel_pos = nn.Embedding(self.pos_bins, pair_dim)
        self.pair_blocks = nn.Sequential(*[ResBlock2d(pair_dim, 2 ** (i % 3)) for i in range(n2d)])
        self.head = nn.Conv2d(pair_dim, 1, 1)

    def forward(self, seq):
        L = seq.shape[1]
        h = self.embed(seq).transpose(1, 2)
        h = self.seq_blocks(h).transpose(1, 2)
        pair = self.left(h)[:, :, None, :] * self.right(h)[:, None, :, :]
        idx = torch.arange(L, device=seq.device)
        rel = (idx[None, :] - idx[:, None]).clamp(-16, 16) + 16
        pair = pair + self.rel_pos(rel)[None]
        pair = self.pair_blocks(pair.permute(0, 3, 1, 2))
        logits = self.head(pair).squeeze(1)
        return 0.5 * (logits + logits.transpose(1, 2))


def contact_loss(model, seq, contacts, pos_weight):
    logits = model(seq)
    L = seq.shape[1]
    i, j = torch.triu_indices(L, L, offset=MIN_SEP, device=seq.device)
    return F.binary_cross_entropy_with_logits(
        logits[:, i, j], contacts[:, i, j], pos_weight=pos_weight
    )


@torch.no_grad()
def top_l_precision(model, seq, contacts, frac=5):
    logits = model(seq)
    B, L = seq.shape
    idx = torch.arange(L)
    long_range = (idx[None, :] - idx[:, None]) >= LONG_RANGE_SEP
    scores = logits.masked_fill(~long_range, float("-inf")).flatten(1)
    k = max(1, L // frac)
    top = scores.topk(k, dim=1).indices
    hits = contacts.flatten(1).gather(1, top)
    return hits.mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--crops", type=int, nargs="+", default=[72, 96, 120])
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--steps-per-crop", type=int, default=3)
    ap.add_argument("--backend", default="eager",
                    help="graph capture is what we gate on; eager keeps CI fast")
    ap.add_argument("--max-graphs", type=int, default=1)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    model = ContactNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    pos_weight = torch.tensor(4.0)
    compiled_loss = torch.compile(contact_loss, backend=args.backend, dynamic=True)

    counters.clear()
    t0 = time.perf_counter()
    for crop in args.crops:
        for step in range(args.steps_per_crop):
            seq, contacts = make_batch(args.batch_size, crop, gen)
            model.train()
            loss = compiled_loss(model, seq, contacts, pos_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if not math.isfinite(loss.item()):
                print(f"non-finite loss at crop={crop} step={step}")
                return 2
        model.eval()
        seq, contacts = make_batch(args.batch_size, crop, gen)
        p = top_l_precision(model, seq, contacts)
        print(f"crop={crop:4d}  loss={loss.item():.4f}  top-L/5 long-range precision={p:.3f}")

    elapsed = time.perf_counter() - t0
    graphs = counters["stats"]["unique_graphs"]
    frames = counters["frames"]["ok"]
    print(f"compiled graphs: {graphs}  (frames ok: {frames}, crops: {len(args.crops)}, "
          f"{elapsed:.1f}s)")
    if graphs > args.max_graphs:
        print(f"FAIL: contact_loss compiled {graphs} graphs for {len(args.crops)} crop lengths "
              f"(budget {args.max_graphs}) although dynamic=True")
        return 1
    print("PASS: compile is stable across crop lengths")
    return 0


if __name__ == "__main__":
    sys.exit(main())
