# expect: custom_op_no_autograd fails_eager_too
import torch


@torch.library.custom_op("corpus::cube_noautograd", mutates_args=())
def cube(x: torch.Tensor) -> torch.Tensor:
    return x ** 3


@cube.register_fake
def _(x):
    return torch.empty_like(x)


model = torch.nn.Linear(3, 3)
out = torch.compile(lambda x: cube(model(x)).mean())(torch.randn(2, 3))
out.backward()
