"""FSDP2 training as users write it: each block and the root sharded with fully_shard, the model
compiled with torch.compile, a loop of forward / backward / optimizer step (gloo on CPU, NCCL with
MR_DEVICE=cuda).
--compile model: torch.compile(model) over the sharded model; blocks: each block compiled on its own
(block.compile()) before fully_shard, so no FSDP hook runs inside a compiled region."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
p.add_argument("--compile", choices=("model", "blocks"), default="model")
args = p.parse_args()

cuda = os.environ.get("MR_DEVICE") == "cuda"
dist.init_process_group("nccl" if cuda else "gloo")
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)
mesh = init_device_mesh(dev.type, (dist.get_world_size(),))


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + F.relu(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim=64, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


backend = os.environ.get("MR_BACKEND", "eager")
torch.manual_seed(0)
model = Net().to(dev)
for b in model.blocks:
    if args.compile == "blocks":
        b.compile(backend=backend)
    fully_shard(b, mesh=mesh)
fully_shard(model, mesh=mesh)
cmodel = torch.compile(model, backend=backend) if args.compile == "model" else model
opt = torch.optim.SGD(model.parameters(), lr=0.01)
g = torch.Generator().manual_seed(rank)
x = torch.randn(16, 64, generator=g).to(dev)
y = x[:, :1].clone()
for step in range(args.steps):
    opt.zero_grad()
    loss = F.mse_loss(cmodel(x), y)
    loss.backward()
    opt.step()
print(f"rank {rank} loss={loss.item():.4f}")
dist.destroy_process_group()
