"""Multi-rank hang: rank 1's data takes a data-dependent branch inside the compiled function that
graph-breaks and issues an extra all-reduce that rank 0 never makes. The ranks' collectives go out
of step: rank 1 ends up waiting in an all-reduce while rank 0 waits in the final barrier, until
the launcher's timeout kills them."""
import datetime
import os

import torch
import torch.distributed as dist

cuda = os.environ.get("MR_DEVICE") == "cuda"
dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(seconds=600))
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)


@torch.compile(backend=os.environ.get("MR_BACKEND", "eager"))
def step(x):
    y = x.relu()
    if y.sum() > 100:                  # data-dependent: only rank 1's data is large enough
        dist.all_reduce(y)             # extra collective on rank 1 only
    return y * 2


for i in range(2):
    x = torch.full((8,), 20.0 if rank == 1 else 1.0, device=dev)
    out = step(x)
    dist.all_reduce(out)
    print(f"rank {rank} step {i}", flush=True)
dist.barrier()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
