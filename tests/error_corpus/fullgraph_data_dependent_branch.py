# expect: graph_break_fullgraph compile_only
import torch


@torch.compile(fullgraph=True)
def f(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


print(f(torch.randn(4)))
