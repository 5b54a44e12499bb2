"""A tagger whose id hashing is a custom op (tagger_ops.py); its fake kernel is in tagger_ops_fake.py, which this
script never imports: torch.compile breaks the graph at the op (GB0090) and torch.export raises
UnsupportedOperatorException. FIXED=1 imports tagger_ops_fake first."""
import importlib
import os

import torch
import torch.nn as nn

import tagger_ops

if os.environ.get("FIXED") == "1":
    importlib.import_module("tagger_ops_fake")


class Tagger(nn.Module):
    def __init__(self, buckets=97, d=8):
        super().__init__()
        self.buckets = buckets
        self.emb = nn.Embedding(buckets, d)
        self.out = nn.Linear(d, 3)

    def forward(self, ids):
        return self.out(self.emb(tagger_ops.bucketize_ids(ids, self.buckets)).mean(1))


model = Tagger().eval()
ids = torch.randint(0, 10_000, (4, 6))
with torch.no_grad():
    print("compiled vs eager", float((torch.compile(model)(ids) - model(ids)).abs().max()))
ep = torch.export.export(model, (ids,))
print("exported vs eager", float((ep.module()(ids) - model(ids)).abs().max()))
