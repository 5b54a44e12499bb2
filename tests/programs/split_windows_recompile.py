"""A session encoder compiled with dynamic=True that loops in Python over x.split(8) windows (blind A/B batch 60's
es): the number of windows fixes the graph, so each new band of lengths (9-16, 17-24, ...) recompiles. FIXED=1: pad
to a multiple of 8 and encode the windows as one batch."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

W = 8


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 16)

    def forward(self, x):
        if os.environ.get("FIXED") == "1":
            b, t, d = x.shape
            n = (t + W - 1) // W
            x = F.pad(x, (0, 0, 0, n * W - t)).reshape(b * n, W, d)
            return self.proj(x).mean(1).reshape(b, n, -1).amax(1)
        return torch.stack([self.proj(w).mean(1) for w in x.split(W, dim=1)], 1).amax(1)


enc = torch.compile(Encoder(), dynamic=True)
with torch.no_grad():
    for length in (12, 20, 28, 36, 44, 13, 21):
        enc(torch.randn(2, length, 4))
print("scored 7 sessions")
