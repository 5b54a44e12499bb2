"""A prefix sum written with associative_scan in its GPU mode (combine_mode="pointwise"), compiled on CPU:
Inductor has no CPU lowering of that mode and says which mode to use. FIXED=1: the mode chosen from the device."""
import os

import torch
from torch._higher_order_ops.associative_scan import associative_scan


def add(a, b):
    return a + b


def mode_for(t):
    if os.environ.get("FIXED"):
        return "pointwise" if t.is_cuda else "generic"
    return "pointwise"


@torch.compile
def running_total(x):
    return associative_scan(add, x, dim=0, combine_mode=mode_for(x))


x = torch.arange(8.0).reshape(4, 2)
out = running_total(x)
assert torch.equal(out, torch.cumsum(x, 0)), out
print("total", out[-1].tolist())
