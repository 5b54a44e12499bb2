"""Message passing on a small graph: each node's mean of its neighbours' features, compiled.
The aggregation buffer comes from torch.empty and is accumulated into with index_add_: its starting
values are whatever bytes were in that memory (tests/test_semantics.py, class uninitialized_empty)."""
import torch

torch.manual_seed(0)
N, E, D = 64, 160, 16
src, dst = torch.randint(0, N, (E,)), torch.randint(0, N // 2, (E,))   # nodes N/2.. have no in-edges
x = torch.randn(N, D)
lin = torch.nn.Linear(D, D)


def aggregate(h):
    m = lin(h)[src]
    agg = torch.empty(h.shape[0], m.shape[1], dtype=h.dtype)
    agg.index_add_(0, dst, m)
    return torch.relu(agg)


f = torch.compile(aggregate)
with torch.no_grad():
    for step in range(3):
        out = f(x * (step + 1))
        print(f"step {step}: mean {out.mean().item():.4f}")
