"""An exported scorer: the batch dim of `query` marked dynamic with Dim.AUTO, `items` left static. The model
ties the two batch dims together (broadcast), so export specializes the batch to the example's 4 without a
word; the loaded program then rejects batch 7 with "Guard failed: ...size()[0] == 4". DIM=dynamic uses
Dim.DYNAMIC (export then fails and names the dim); FIXED=1 marks both batch dims; CATCH=1 logs each failing
request size and exits 1, as a serving check does."""
import os

import torch
import torch.nn as nn
from torch.export import Dim, export


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, query, items):
        return (self.proj(query).unsqueeze(1) * items).sum(-1)


dim = Dim.DYNAMIC if os.environ.get("DIM") == "dynamic" else Dim.AUTO
spec = {"query": {0: dim}, "items": {0: dim} if os.environ.get("FIXED") == "1" else None}
ep = export(Scorer(), (torch.randn(4, 8), torch.randn(4, 5, 8)), dynamic_shapes=spec)
scorer = ep.module()
failed = 0
for batch in (4, 7):
    if os.environ.get("CATCH") != "1":
        print(f"batch {batch}: scores {tuple(scorer(torch.randn(batch, 8), torch.randn(batch, 5, 8)).shape)}")
        continue
    try:   # a serving check: each request size, failures logged
        scorer(torch.randn(batch, 8), torch.randn(batch, 5, 8))
        print(f"batch {batch}: ok")
    except Exception as e:
        failed += 1
        print(f"batch {batch}: FAILED: {e}")
if failed:
    raise SystemExit(f"{failed} request sizes failed")
