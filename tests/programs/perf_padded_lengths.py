"""Nightly scoring of support tickets: each batch is padded to its own longest ticket and the last batch is
smaller. Compiled with the default dynamic shapes, the changing length and then the last batch's size each
make a graph torch expects (automatic dynamic), and those compiles are most of the job's compile time."""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.mix = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 64), nn.LayerNorm(64))
        self.head = nn.Linear(64, 3)

    def forward(self, ids, mask):
        h = self.mix(self.emb(ids)) * mask.unsqueeze(-1)
        return self.head(h.sum(1) / mask.sum(1, keepdim=True))


model = torch.compile(Scorer().eval(), dynamic=True if os.environ.get("FIXED") else None)   # FIXED=1: the fix
lengths = [40, 57, 63, 71, 48, 66]
batches = [16] * (len(lengths) - 1) + [5]          # the last batch is what is left over
with torch.no_grad():
    for n, t in zip(batches, lengths):
        ids = torch.randint(1, 1000, (n, t))
        mask = (torch.rand(n, t) > 0.1).float()
        mask[:, 0] = 1
        print(f"batch of {n} at length {t}: {model(ids, mask).argmax(-1).tolist()[:4]}")
