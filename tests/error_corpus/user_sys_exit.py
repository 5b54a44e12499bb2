# expect: user_error fails_eager_too
import sys

import torch


@torch.compile(backend="eager")
def f(x):
    return x * 2


out = f(torch.ones(2))
if out.sum() != 5:
    sys.exit(3)
