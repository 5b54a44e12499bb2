"""Multi-rank divergence: rank 1's data takes a data-dependent Python branch that graph-breaks;
rank 0's data does not reach it. Collectives still match, so the run finishes."""
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
def step(x, use_scale):
    y = x.relu()
    if use_scale:                      # a per-rank Python flag: only rank 1 goes in
        if y.sum() > 0:                # data-dependent branch: graph break on rank 1 only
            y = y * 2
    return y.sum()


x = torch.ones(8, device=dev)
for i in range(2):
    loss = step(x, rank == 1)
    dist.all_reduce(loss)
print(f"rank {rank} loss={loss.item()}")
dist.destroy_process_group()
