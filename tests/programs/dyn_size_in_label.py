"""A padded-batch encoder compiled with dynamic=True whose block labels its profiler region with the length
(record_function(f"attn[T={T}]"); blind A/B batch 52, pytorch#129882): Dynamo makes the length a constant to build
the string, so every new length compiles again. input_ids and attention_mask share the length (one symbol).
FIXED=1: a fixed label. Prints the number of graphs."""
import os

import torch
import torch.nn as nn
from torch.profiler import record_function

FIXED = os.environ.get("FIXED") == "1"


class Encoder(nn.Module):
    def __init__(self, vocab=64, d=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask):
        x = self.emb(input_ids)
        T = x.shape[1]
        with record_function("attn" if FIXED else f"attn[T={T}]"):
            x = torch.relu(self.proj(x)) * attention_mask.unsqueeze(-1)
        return x.sum(1) / attention_mask.sum(1, keepdim=True)


torch.manual_seed(0)
model = torch.compile(Encoder(), dynamic=True, backend="eager")
for T in (5, 6, 7, 9):
    ids = torch.randint(0, 64, (3, T))
    out = model(ids, torch.ones(3, T))
from torch._dynamo.utils import counters  # noqa: E402
print(f"graphs {counters['stats']['unique_graphs']}")
