# expect: custom_op_bad_fake compile_only
import torch


@torch.library.custom_op("corpus::mask_badfake", mutates_args=())
def positive(x: torch.Tensor) -> torch.Tensor:
    return x > 0


@positive.register_fake
def _(x):
    return torch.empty_like(x)          # wrong: the real kernel returns bool


@torch.compile
def f(x):
    return positive(x).float().sum() + x.sum()


print(f(torch.randn(6)))
