"""DDP (gloo, CPU) with a BatchNorm model, compiled as torch.compile(DDP(model)), evaluated under no_grad
(blind A/B batch 14's pattern, written fresh). EVAL_INNER=1 evaluates the compiled inner module instead,
after broadcasting the buffers from rank 0 once. Run with torchrun --nproc_per_node 2 (tests/test_multirank.py)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
model = torch.compile(DDP(net), backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    loss = model(torch.randn(16, 8)).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
model.eval()
if os.environ.get("EVAL_INNER") == "1":
    for b in net.buffers():
        dist.broadcast(b, src=0)
    evaluator = torch.compile(net, backend="eager")
else:
    evaluator = model
with torch.no_grad():
    out = evaluator(torch.randn(16, 8))
print(f"rank {dist.get_rank()} eval {tuple(out.shape)}")
dist.destroy_process_group()
