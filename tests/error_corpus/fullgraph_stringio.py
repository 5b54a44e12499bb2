# expect: graph_break_fullgraph compile_only
import io

import torch


@torch.compile(fullgraph=True)
def f(x):
    buf = io.StringIO("3")
    return x * int(buf.read())


print(f(torch.randn(3)))
