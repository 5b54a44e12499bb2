"""An encoder whose position table is built for 16 rows and grown only when a longer input arrives (eagerly).
Exported with seq up to 64 from an 8-token example, export fails ("Constraints violated (seq)") and suggests
`seq = Dim('seq', max=16)`: that would make the exported program reject longer inputs. FULL=1 builds the table
at the largest size before exporting."""
import os

import torch
import torch.nn as nn
from torch.export import Dim, export


class Encoder(nn.Module):
    def __init__(self, rows=16):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self._build(rows)

    def _build(self, rows):
        self.register_buffer("pos", torch.arange(rows, dtype=torch.float32)[:, None] / rows, persistent=False)

    def forward(self, x):
        seq = x.shape[1]
        if seq > self.pos.shape[0]:
            self._build(seq)
        return self.proj(x) + self.pos[:seq]


model = Encoder()
if os.environ.get("FULL") == "1":
    model._build(64)
ep = export(model, (torch.randn(2, 8, 8),), dynamic_shapes={"x": {1: Dim("seq", max=64)}})
print("exported:", ep.module()(torch.randn(2, 40, 8)).shape)
