# expect: graph_break_fullgraph compile_only
import torch


@torch.compile(fullgraph=True)
def f(x):
    print("value:", x)
    return x.relu()


print(f(torch.randn(3)))
