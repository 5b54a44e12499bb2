"""A scorer that calls its compiled model under model.eval() but with grad enabled (blind A/B batch 53,
pytorch#141790): AOTAutograd compiles a training graph and saves its cache entry only after a backward, which never
runs, so every warm start misses the AOTAutograd cache (no bypass). NO_GRAD=1: scoring under torch.no_grad()."""
import contextlib
import os

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 4)).eval()
scorer = torch.compile(model)
ctx = torch.no_grad() if os.environ.get("NO_GRAD") == "1" else contextlib.nullcontext()
with ctx:
    probs = scorer(torch.randn(16, 32)).softmax(-1)
print(f"mean top prob {probs.max(-1).values.mean().item():.4f}")
