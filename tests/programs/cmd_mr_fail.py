"""Multi-rank (gloo): rank 1 fails under fullgraph=True (a print on its path only); rank 0 waits in the
all-reduce until torchrun stops it. Like mr_fail.py, with the test marker."""
import torch
import torch.distributed as dist
import cmd_marker  # noqa: F401

dist.init_process_group("gloo")
rank = dist.get_rank()


@torch.compile(backend="eager", fullgraph=True)
def step(x, verbose):
    y = x.relu()
    if verbose:
        print("debug", y)
    return y.sum()


loss = step(torch.ones(8), rank == 1)
dist.all_reduce(loss)
dist.destroy_process_group()
