"""Three Inductor cases in one run: a pointwise chain fused into one kernel, a matmul with an
epilogue (extern mm + fused bias/relu), and an op Inductor falls back to eager ATen for (sort)."""
import torch


@torch.compile
def pointwise(x):
    return ((x.sin() + 1.0) * x.cos()).relu() - 0.5


@torch.compile
def mm_epilogue(x, w, b):
    return torch.relu(x @ w + b) * 2.0


@torch.compile
def with_fallback(x):
    s = torch.sort(x, dim=-1).values
    return s * 3.0


x = torch.randn(64, 32)
pointwise(x)
mm_epilogue(x, torch.randn(32, 16), torch.randn(16))
with_fallback(x)
print("ok")
