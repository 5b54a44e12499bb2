"""Multi-rank failure: the compiled step uses fullgraph=True; rank 1's flag sends it through a
print(), which cannot be traced, so rank 1 raises while rank 0 waits in the all-reduce until
torchrun stops it."""
import os

import torch
import torch.distributed as dist

cuda = os.environ.get("MR_DEVICE") == "cuda"
dist.init_process_group("nccl" if cuda else "gloo")
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)


@torch.compile(backend=os.environ.get("MR_BACKEND", "eager"), fullgraph=True)
def step(x, verbose):
    y = x.relu()
    if verbose:
        print("debug", y)              # graph break -> error under fullgraph=True, on rank 1 only
    return y.sum()


loss = step(torch.ones(8, device=dev), rank == 1)
dist.all_reduce(loss)
print(f"rank {rank} loss={loss.item()}")
dist.destroy_process_group()
