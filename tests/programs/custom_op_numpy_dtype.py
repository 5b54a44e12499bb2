"""A custom op whose real kernel calls np.interp, which returns float64 for float32 inputs, while its fake kernel
declares the input's dtype (blind A/B batch 41: a churn model's recency weights). Eager promotes the loss to float64
silently; compiled, Inductor's check of the op's output fails ("expected dtype torch.float32 but got
torch.float64"). --fixed: the real kernel casts back to the input's dtype."""
import sys

import numpy as np
import torch


@torch.library.custom_op("churn_demo::recency", mutates_args=())
def recency(age: torch.Tensor) -> torch.Tensor:
    w = np.interp(age.detach().numpy(), [0.0, 30.0, 365.0], [1.0, 0.6, 0.1])
    out = torch.from_numpy(w)
    return out.to(dtype=age.dtype) if "--fixed" in sys.argv else out


@recency.register_fake
def _(age):
    return torch.empty_like(age)


@torch.compile
def weighted_loss(pred, target, age):
    return (recency(age) * (pred - target).square()).mean()


torch.manual_seed(0)
pred, target, age = torch.randn(64), torch.randn(64), torch.rand(64) * 400
print(f"loss {weighted_loss(pred, target, age).item():.5f}")
