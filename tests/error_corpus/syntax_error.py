# expect: syntax_error before_compile
import torch


@torch.compile
def f(x)
    return x + 1


print(f(torch.randn(2)))
