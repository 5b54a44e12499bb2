"""Recompile: the intra-op thread count changes between calls (a per-request torch.set_num_threads)."""
import torch

lin = torch.nn.Linear(4, 4)


@torch.compile(backend="eager")
def score(x):
    return lin(x).softmax(-1)


for n in (1, 2):
    torch.set_num_threads(n)
    score(torch.randn(2, 4))
