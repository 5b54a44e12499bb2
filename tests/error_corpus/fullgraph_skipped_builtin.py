# expect: graph_break_fullgraph compile_only
import os

import torch


@torch.compile(fullgraph=True)
def f(x):
    salt = os.urandom(2)
    return x + len(salt)


print(f(torch.randn(3)))
