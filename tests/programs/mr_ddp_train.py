"""Data-parallel training as users write it: an MLP wrapped in DDP, then torch.compile, a loop of
forward / backward / optimizer step on each rank's data shard (gloo on CPU, NCCL with MR_DEVICE=cuda).

--bad-rank N: rank N's shard is loaded with a wrong feature count (a data bug: 12 columns where the
model wants 16), so its forward raises a shape error at the `loss = ...` line; the other ranks then
lose their peer in DDP's gradient all-reduce.
--bucket-cap-mb X: DDP's gradient bucket size (the model has 2 MB of parameters: with 1 the DDP
optimizer splits the compiled graph at bucket boundaries).
--wrap outer: torch.compile(DDP(model)) (torch's DDP notes); inner: DDP(model) after model.compile()."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=3)
p.add_argument("--bad-rank", type=int, default=None)
p.add_argument("--bucket-cap-mb", type=float, default=25.0)
p.add_argument("--wrap", choices=("outer", "inner"), default="outer")
args = p.parse_args()

cuda = os.environ.get("MR_DEVICE") == "cuda"
dist.init_process_group("nccl" if cuda else "gloo")
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)
FEATURES = 16


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(FEATURES, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 512)
        self.head = nn.Linear(512, 1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.head(F.relu(self.fc3(x)))


def load_shard(rank, n=32):
    """This rank's slice of the data set (synthetic here)."""
    g = torch.Generator().manual_seed(rank)
    cols = 12 if rank == args.bad_rank else FEATURES
    x = torch.randn(n, cols, generator=g)
    return x.to(dev), x[:, :1].sum(dim=1, keepdim=True).to(dev)


torch.manual_seed(0)
backend = os.environ.get("MR_BACKEND", "eager")
net = MLP().to(dev)
if args.wrap == "inner":
    net.compile(backend=backend)
model = DDP(net, bucket_cap_mb=args.bucket_cap_mb)
cmodel = torch.compile(model, backend=backend) if args.wrap == "outer" else model
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = load_shard(rank)
for step in range(args.steps):
    opt.zero_grad()
    loss = F.mse_loss(cmodel(x), y)
    loss.backward()
    opt.step()
print(f"rank {rank} loss={loss.item():.4f}")
dist.destroy_process_group()
