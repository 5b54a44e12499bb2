"""A scaled-softmax attention whose scale is math.log of the sequence length, compiled with dynamic=True (blind A/B
batch 51): math.log needs a Python float, so Dynamo makes the length a constant: a graph per length. FIXED=1: the
log as a tensor op (torch.full((), T).log()), one graph."""
import math
import os

import torch
from torch import nn


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, -1)
        T = x.shape[1]
        if os.environ.get("FIXED") == "1":
            log_n = torch.full((), T, dtype=x.dtype).log()
        else:
            log_n = math.log(T)
        att = (q * log_n) @ k.transpose(-1, -2) / 4.0
        return (att.softmax(-1) @ v).sum()


torch.manual_seed(0)
model = torch.compile(Attn().eval(), dynamic=True, backend="eager")
with torch.no_grad():
    for T in (40, 56, 72):
        print(f"T {T}: {model(torch.randn(2, T, 16)).item():.4f}")
