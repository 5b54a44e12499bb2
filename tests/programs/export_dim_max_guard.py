"""A scorer exported with a batch Dim(max=64) and then served a batch of 100 (blind A/B batch 60's guard family): the
exported module's input check refuses it with "Guard failed: x.size()[0] <= 64". FIXED=1: export with max=256."""
import os

import torch
import torch.nn as nn
from torch.export import Dim

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).eval()
top = 256 if os.environ.get("FIXED") == "1" else 64
ep = torch.export.export(model, (torch.randn(8, 8),), dynamic_shapes={"input": {0: Dim("batch", min=1, max=top)}})
x = torch.randn(100, 8)
print(f"batch 100: max|diff| {(ep.module()(x) - model(x)).abs().max().item():.2e}")
