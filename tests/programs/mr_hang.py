"""Multi-rank hang: rank 1's data takes a data-dependent branch inside the compiled function that
graph-breaks and issues an extra all-reduce; rank 0 never joins it and waits at the next step's
all-reduce with a different tensor, so both ranks block until the launcher's timeout."""
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
    return y.sum()


for i in range(3):
    x = torch.full((8,), 20.0 if rank == 1 else 1.0, device=dev)
    loss = step(x)
    dist.all_reduce(loss.reshape(1).expand(4).contiguous() if rank == 0 else loss)
    print(f"rank {rank} step {i}", flush=True)
dist.destroy_process_group()
