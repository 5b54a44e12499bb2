# expect: custom_op_bad_fake compile_only
import torch


@torch.library.custom_op("corpus::pool_badfake", mutates_args=())
def pool(x: torch.Tensor) -> torch.Tensor:
    return x.sum(-1)


@pool.register_fake
def _(x):
    return torch.empty_like(x)          # wrong: the real kernel drops the last dim


@torch.compile
def f(x):
    return pool(x) * 2


print(f(torch.randn(2, 5)).shape)
