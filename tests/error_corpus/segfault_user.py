# expect: segfault fails_eager_too
import ctypes

import torch


@torch.compile(backend="eager")
def f(x):
    return x + 1


f(torch.ones(2))
ctypes.string_at(0)   # the program dereferences NULL itself
