"""Recompiles on the thread count (a per-request torch.set_num_threads); behind it, a new batch size fails only
against an older graph compiled at the same thread count."""
import torch

lin = torch.nn.Linear(4, 4)


@torch.compile(backend="eager")
def score(x):
    return lin(x).softmax(-1)


for threads, batch in ((1, 4), (2, 4), (1, 3)):
    torch.set_num_threads(threads)
    score(torch.randn(batch, 4))
