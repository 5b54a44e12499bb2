# expect: graph_break_fullgraph compile_only
import torch


@torch.compiler.disable
def log_stats(x):
    return float(x.mean())


@torch.compile(fullgraph=True)
def f(x):
    log_stats(x)
    return x.relu()


print(f(torch.randn(4)))
