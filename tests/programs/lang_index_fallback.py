"""A per-request language passed as an IntEnum member into a compiled forward (blind A/B batch 50): Dynamo guards
the member's identity, a graph per language. TENSOR_INDEX=1 passes it as a 0-d tensor that indexes the weight:
Inductor fails on the index (aten._local_scalar_dense), Dynamo adds a graph break (GB0219) and runs forward
eagerly, so the recompiles are gone but nothing is compiled."""
import enum
import os

import torch
from torch import nn


class Lang(enum.IntEnum):
    EN = 0
    DE = 1
    FR = 2


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lang = nn.Embedding(len(Lang), 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x, lang):
        return self.head(x + self.lang.weight[lang])


torch.manual_seed(0)
model = torch.compile(Tagger().eval())
with torch.no_grad():
    for lang in Lang:
        arg = torch.tensor(int(lang)) if os.environ.get("TENSOR_INDEX") == "1" else lang
        print(f"{lang.name} {model(torch.ones(4, 8), arg).sum().item():.4f}")
