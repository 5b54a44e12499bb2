"""A scoring model whose project routes PyTorch's aten::sigmoid on CPU through a NumPy kernel of its own
(torch.library.Library("aten", "IMPL").impl("sigmoid", ..., "AutogradCPU")): eager runs, torch.compile fails at the
model's sigmoid line, since it runs that Python kernel while tracing, on fake tensors (.numpy() raises;
pytorch#139707; blind A/B batch 48). FIXED=1 keeps the NumPy call inside a torch.library.custom_op with a fake kernel,
which the override calls: the compiled scores match eager."""
import os

import numpy as np
import torch
import torch.nn as nn


@torch.library.custom_op("scoring::np_sigmoid", mutates_args=())
def np_sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(1.0 / (1.0 + np.exp(-x.detach().numpy()))).to(x.dtype)


@np_sigmoid.register_fake
def _(x):
    return torch.empty_like(x)


def _sigmoid_cpu(x):
    if os.environ.get("FIXED"):
        return np_sigmoid(x)
    return torch.from_numpy(1.0 / (1.0 + np.exp(-x.detach().contiguous().numpy()))).to(x.dtype)


_lib = torch.library.Library("aten", "IMPL")
_lib.impl("sigmoid", _sigmoid_cpu, "AutogradCPU")


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(16, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return torch.sigmoid(self.head(torch.sigmoid(self.body(x)))).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Scorer().eval()
    x = torch.randn(32, 16)
    with torch.no_grad():
        eager = model(x)
        compiled = torch.compile(model)(x)
    print(f"max|compiled - eager| = {(compiled - eager).abs().max():.2e}")
