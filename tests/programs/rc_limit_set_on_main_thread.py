"""A scorer that runs its compiled model on one engine thread (ThreadPoolExecutor) and raises recompile_limit at
import, on the main thread (blind A/B batch 53, pytorch#186537): torch 2.15 keeps config overrides per thread, so the
engine thread compiles under the default 8 and the 9th padded length fails under fullgraph=True. FIXED=1: the pool's
initializer sets the limit on the engine thread."""
import os
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

LIMIT = 16


def configure():
    torch._dynamo.config.recompile_limit = LIMIT


configure()
model = torch.compile(nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)).eval(), dynamic=False,
                      fullgraph=True, backend="eager")
pool = ThreadPoolExecutor(max_workers=1, initializer=configure if os.environ.get("FIXED") == "1" else None)
with torch.no_grad():
    for n in range(1, 11):
        out = pool.submit(model, torch.randn(n, 8)).result()
print(f"served 10 lengths, last output {tuple(out.shape)}")
