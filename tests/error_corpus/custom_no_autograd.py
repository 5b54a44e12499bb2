# expect: custom_op_no_autograd fails_eager_too
import torch


@torch.library.custom_op("corpus::sq_noautograd", mutates_args=())
def sq(x: torch.Tensor) -> torch.Tensor:
    return x * x


@sq.register_fake
def _(x):
    return torch.empty_like(x)


@torch.compile(backend="aot_eager")
def f(x):
    return sq(x).sum()


x = torch.randn(3, requires_grad=True)
f(x).backward()
print(x.grad)
