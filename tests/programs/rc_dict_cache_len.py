"""A sinusoidal position table cached per sequence length in a dict (`if length not in self._table`): the
length becomes a constant and the dict's keys are guarded, so each bucket length compiles again
(blind A/B batch 37: an IMU scorer hit the recompile limit)."""
import math

import torch


class Positions(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.d = d
        self._table = {}

    def _build(self, n):
        pos = torch.arange(n).unsqueeze(1)
        div = torch.exp(torch.arange(0, self.d, 2) * (-math.log(10000.0) / self.d))
        return torch.cat([torch.sin(pos * div), torch.cos(pos * div)], dim=1)

    def forward(self, x):
        length = x.shape[1]
        if length not in self._table:
            self._table[length] = self._build(length)
        return x + self._table[length]


model = torch.compile(Positions(), backend="eager")
for n in (32, 48, 64, 80):
    print(n, model(torch.randn(2, n, 16)).shape)
