"""Multi-rank failure by signal: rank 1 is SIGKILLed after compiling (as the OOM killer would);
rank 0 then loses its peer in the all-reduce. torchrun names rank 1 as the root cause."""
import os
import signal

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()


@torch.compile(backend="eager")
def step(x):
    return x.relu().sum()


loss = step(torch.ones(4))
if rank == 1:
    os.kill(os.getpid(), signal.SIGKILL)
dist.all_reduce(loss)
dist.destroy_process_group()
