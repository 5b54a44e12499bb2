# expect: data_dependent_guard compile_only
import numpy as np
import torch


@torch.compile(fullgraph=True)
def f(x):
    return x + np.random.rand()


print(f(torch.randn(3)))
