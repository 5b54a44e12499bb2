"""A state filter whose transition is kept orthogonal with torch.nn.utils.parametrizations.orthogonal, run for 32
steps per sequence, exported for serving with torch.export; scoring runs under parametrize.cached(). Prints how many
matrix_exp ops the exported graph runs per call. CACHED=1 exports under parametrize.cached()."""
import collections
import contextlib
import os

import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import orthogonal


class StateFilter(nn.Module):
    def __init__(self, d=32, steps=32):
        super().__init__()
        self.steps = steps
        self.inp = nn.Linear(8, d)
        self.transition = orthogonal(nn.Linear(d, d, bias=False))
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        for _ in range(self.steps):
            h = torch.tanh(self.transition(h) + self.inp(x))
        return self.out(h)


def main():
    torch.manual_seed(0)
    model = StateFilter().eval()
    x = torch.randn(4, 8)
    ctx = parametrize.cached() if os.environ.get("CACHED") else contextlib.nullcontext()
    with torch.no_grad(), ctx:
        ep = torch.export.export(model, (x,))
    ops = collections.Counter(str(n.target) for n in ep.graph.nodes if n.op == "call_function")
    n_exp = sum(v for k, v in ops.items() if "matrix_exp" in k)
    with torch.no_grad(), parametrize.cached():
        diff = (ep.module()(x) - model(x)).abs().max().item()
    print(f"exported graph: {n_exp} matrix_exp per call; max|exported - eager| = {diff:.2e}")


if __name__ == "__main__":
    main()
