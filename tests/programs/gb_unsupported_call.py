"""Graph break: a call Dynamo cannot trace (a C function from the standard library)."""
import pickle

import torch


@torch.compile(backend="eager")
def f(x):
    blob = pickle.dumps([1, 2, 3])
    return x + len(blob)


f(torch.randn(4))
