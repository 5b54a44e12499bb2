"""Blind A/B batch 66: a query encoder whose embedding mixes each token with its neighbours (MobileBERT's trigram
input: F.pad of e[:, 1:] and e[:, :-1]), exported with Dim("seq", min=2) so that an empty query (CLS + SEP, length
2) is served. Export records the layout of the slice e[:, 1:] (length seq - 1) and guards its size against 1 from
the example: "Not all values of seq ... satisfy the generated guard ((-1) + L['ids'].size()[1]) != 1", no suggested
fix (torch 2.9-2.15). SIZE_OBLIVIOUS=1 exports under torch.fx.experimental._config.patch(backed_size_oblivious=True):
the range stays [2, 128] and the exported program matches eager at length 2. make() is the export command's
factory."""
import contextlib
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim


class QueryEncoder(nn.Module):
    def __init__(self, vocab=120, d=16, n_intents=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.mix = nn.Linear(3 * d, d)
        self.head = nn.Linear(d, n_intents)

    def forward(self, ids):
        e = self.emb(ids)
        e = torch.cat([F.pad(e[:, 1:], [0, 0, 0, 1]), e, F.pad(e[:, :-1], [0, 0, 1, 0])], dim=2)
        return self.head(torch.tanh(self.mix(e)).mean(1))


def make():
    torch.manual_seed(0)
    model = QueryEncoder().eval()
    ids = torch.randint(3, 120, (2, 8))
    return model, (ids,), {}, {"ids": {0: Dim("batch", min=1, max=64), 1: Dim("seq", min=2, max=128)}}


if __name__ == "__main__":
    model, args, _, ds = make()
    ctx = torch.fx.experimental._config.patch(backed_size_oblivious=True) if os.environ.get("SIZE_OBLIVIOUS") \
        else contextlib.nullcontext()
    with ctx:
        ep = torch.export.export(model, args, dynamic_shapes=ds)
    print("range", sorted(str(v) for v in ep.range_constraints.values()))
    worst = 0.0
    for shape in ((1, 2), (3, 5), (2, 128)):
        x = torch.randint(3, 120, shape)
        with torch.no_grad():
            worst = max(worst, float((ep.module()(x) - model(x)).abs().max()))
    print(f"exported vs eager {worst:.1e}")
