"""Modality dropout that picks the groups to drop with Python's random.sample inside a compiled forward (blind A/B
batch 60's eu, pytorch#197085): Dynamo evaluates the draw once while tracing and keeps its result, so every call drops
the same groups. FIXED=1: the draw in torch (torch.randperm), inside the graph."""
import os
import random

import torch
import torch.nn as nn

GROUPS, DROP = 6, 3


class ModDrop(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.ModuleList(nn.Linear(4, 8) for _ in range(GROUPS))

    def forward(self, x):
        if os.environ.get("FIXED") == "1":
            keep = torch.ones(GROUPS).index_fill(0, torch.randperm(GROUPS)[:DROP], 0.0)
        else:
            keep = torch.ones(GROUPS)
            keep[random.sample(range(GROUPS), DROP)] = 0.0
        feats = torch.stack([e(x[:, i]) for i, e in enumerate(self.enc)], 1)
        return feats * keep[None, :, None], keep


random.seed(0)
torch.manual_seed(0)
model = torch.compile(ModDrop())
x = torch.randn(2, GROUPS, 4)
patterns = {tuple(model(x)[1].tolist()) for _ in range(10)}
print(f"distinct drop patterns over 10 steps: {len(patterns)}")
assert len(patterns) > 1, "modality dropout drops the same groups on every step"
