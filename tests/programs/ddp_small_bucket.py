"""DDP training step with small gradient buckets (bucket_cap_mb=0.25), compiled as torch.compile(DDP(model)).
Runs without torch.compile; compiled, DDP's graph splitting raises torch's own AssertionError ("First bucket
should be smaller/equal to other buckets"). One process (a 1-rank gloo group in a temporary FileStore) or
under torchrun. BUCKET_MB sets the bucket size (1 runs compiled too)."""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

if "RANK" in os.environ:
    dist.init_process_group("gloo")
else:
    store = dist.FileStore(os.path.join(tempfile.mkdtemp(), "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 32), nn.GELU(), nn.Linear(32, 4))
model = torch.compile(DDP(net, bucket_cap_mb=float(os.environ.get("BUCKET_MB", "0.25"))))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 32)), torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"rank {dist.get_rank()} step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
