# expect: syntax_error before_compile
import torch


@torch.compile
def f(x):
    y = x + 1
      return y


print(f(torch.randn(2)))
