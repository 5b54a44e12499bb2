# expect: custom_op_mutates_args compile_only
import torch


@torch.library.custom_op("corpus::add_one_", mutates_args=())   # wrong: it mutates x
def add_one_(x: torch.Tensor) -> None:
    x.add_(1)


@add_one_.register_fake
def _(x):
    return None


@torch.compile
def f(x):
    y = x.clone()
    add_one_(y)
    return y


x = torch.zeros(3)
out = f(x)
torch.testing.assert_close(out, torch.ones(3))
