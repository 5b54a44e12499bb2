# expect: graph_break_fullgraph compile_only
import torch


@torch.compile(fullgraph=True)
def f(x):
    x = x * 2
    torch._dynamo.graph_break()
    return x + 1


print(f(torch.randn(3)))
