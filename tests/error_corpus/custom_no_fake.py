# expect: custom_op_no_fake compile_only
import torch


@torch.library.custom_op("corpus::scale_nofake", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 3


@torch.compile(fullgraph=True)
def f(x):
    return scale(x).sin()


print(f(torch.randn(4)))
