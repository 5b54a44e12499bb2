"""Multi-rank hang while compiling: on step 2 rank 1 gets a different micro-step count, so its
compiled step recompiles, and that recompile is slow (Dynamo unrolls the Python loop). Rank 0 hits
its cache and waits in the all-reduce for rank 1, which is still compiling when the timeout hits
(ours, or with MR_PG_TIMEOUT=8 the collective's own timeout on rank 0)."""
import datetime
import os

import torch
import torch.distributed as dist

cuda = os.environ.get("MR_DEVICE") == "cuda"
# MR_PG_TIMEOUT: the job's own collective timeout (default: the library's 30 min)
pg_timeout = datetime.timedelta(seconds=float(os.environ.get("MR_PG_TIMEOUT", 1800)))
dist.init_process_group("nccl" if cuda else "gloo", timeout=pg_timeout)
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
if cuda:
    torch.cuda.set_device(dev)


@torch.compile(backend=os.environ.get("MR_BACKEND", "eager"))
def step(x, micro_steps):
    s = 0
    for i in range(micro_steps):       # a Python int loop: unrolled while tracing, guarded on its value
        s = s + i
    return (x + s).sum()


for i in range(2):
    n = 10 if (rank == 0 or i == 0) else 2_000_000   # rank 1, step 2: new value -> slow recompile
    loss = step(torch.ones(8, device=dev), n)
    dist.all_reduce(loss)
    print(f"rank {rank} step {i}", flush=True)
dist.destroy_process_group()
