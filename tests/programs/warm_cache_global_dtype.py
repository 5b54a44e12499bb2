"""A custom op whose output dtype comes from a module global set from an environment variable (not an op
argument): the compiled graph and the compile caches' key are the same with the flag on or off, so a warm
cache from a run with the flag off serves a graph that checks for float32 (blind A/B batch 24)."""
import os

import torch

OUT_DTYPE = torch.bfloat16 if os.environ.get("HALF_OUT") == "1" else torch.float32


@torch.library.custom_op("cdtest::dequant", mutates_args=())
def dequant(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (q.float() * scale).to(OUT_DTYPE)


@dequant.register_fake
def _(q, scale):
    return q.new_empty(q.shape, dtype=OUT_DTYPE)


@torch.compile
def layer(q, scale, x):
    w = dequant(q, scale)
    return x @ w.t().to(x.dtype)


q = torch.randint(-8, 8, (16, 8), dtype=torch.int8)
y = layer(q, torch.full((16, 1), 0.1), torch.randn(4, 8))
print("dtype", y.dtype, "sum", f"{y.float().sum().item():.3f}")
