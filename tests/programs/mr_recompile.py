"""Multi-rank divergence: rank 1 gets a different batch size on step 2 and recompiles; rank 0
keeps one shape and compiles once. Collectives (all-reduce of a scalar) still match."""
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
    return (x @ w).relu().mean()


w = torch.ones(4, 4, device=dev)
for i in range(3):
    batch = 8 if (rank == 0 or i == 0) else 8 + i   # rank 1: uneven last batches -> new shapes
    loss = step(torch.ones(batch, 4, device=dev), w)
    dist.all_reduce(loss)
print(f"rank {rank} loss={loss.item()}")
dist.destroy_process_group()
