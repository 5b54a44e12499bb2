"""A streaming encoder keeps its last 4 chunks in a collections.deque(maxlen=4) made outside the compiled
forward, concatenates them and adds a position table sized for 4 chunks. Eager's deque drops the oldest chunk
on append; torch 2.15's Dynamo traces the append without the maxlen (an open bug), so the traced context holds
5 chunks and the add fails on fake tensors only compiled. FIXED=1 keeps the window as a tensor."""
import collections
import os

import torch
import torch.nn as nn


class Stream(nn.Module):
    def __init__(self, d=16, chunk=4, chunks=4):
        super().__init__()
        self.chunk, self.chunks = chunk, chunks
        self.proj = nn.Linear(d, d)
        self.pos = nn.Parameter(torch.zeros(1, chunk * chunks, d))
        silence = torch.zeros(2, chunk, d)
        self.window = (torch.zeros(2, chunk * chunks, d) if os.environ.get("FIXED") == "1"
                       else collections.deque([silence] * chunks, maxlen=chunks))

    def forward(self, x):
        h = self.proj(x)
        if isinstance(self.window, torch.Tensor):
            self.window = torch.cat([self.window[:, self.chunk:], h], dim=1)
            ctx = self.window
        else:
            self.window.append(h)
            ctx = torch.cat(list(self.window), dim=1)
        return (ctx + self.pos).mean(1)


torch.manual_seed(0)
model = Stream()
step = torch.compile(model, backend="eager")
with torch.no_grad():
    for i in range(3):
        print(f"chunk {i}: {step(torch.randn(2, 4, 16)).abs().mean().item():.4f}")
