"""Multi-rank, no divergence: every rank compiles the same graph and all-reduces (gloo or NCCL)."""
import os

import torch
import torch.distributed as dist

cuda = os.environ.get("MR_DEVICE") == "cuda"
dist.init_process_group("nccl" if cuda else "gloo")
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)


@torch.compile(backend=os.environ.get("MR_BACKEND", "eager"))
def step(x, w):
    y = (x @ w).relu().sum()
    return y


w = torch.ones(4, 4, device=dev)
for i in range(3):
    loss = step(torch.ones(8, 4, device=dev), w)
    dist.all_reduce(loss)
print(f"rank {rank} loss={loss.item()}")
dist.destroy_process_group()
