"""Near-duplicate search with SimHash: the random hyperplanes come from an lru_cache'd builder (drawn once per
process in eager). Compiled, Dynamo ignores the cache wrapper, so torch.randn runs inside the graph and every
call hashes with new planes: a document no longer matches its own signature. Prints the self-match rate.
FIXED=1 draws the planes once outside the compiled function and passes them in."""
import functools
import os
import sys

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=None)
def hyperplanes(dim, bits):
    return torch.randn(dim, bits)


class Encoder(nn.Module):
    def __init__(self, vocab=100, dim=16):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, dim)

    def forward(self, ids):
        return self.emb(ids)


def signature(model, ids, planes=None):
    return model(ids) @ (hyperplanes(16, 32) if planes is None else planes) > 0


torch.manual_seed(0)
model = Encoder().eval()
sign = torch.compile(signature) if "--eager" not in sys.argv else signature
docs = torch.randint(0, 100, (64, 12))
planes = hyperplanes(16, 32) if os.environ.get("FIXED") == "1" else None
with torch.no_grad():
    first, again = sign(model, docs, planes), sign(model, docs, planes)
rate = (first == again).all(1).float().mean().item()
print(f"self-match {rate:.3f}")
sys.exit(0 if rate > 0.99 else 1)
