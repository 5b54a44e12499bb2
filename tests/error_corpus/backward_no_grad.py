# expect: autograd_misuse fails_eager_too
import torch


@torch.compile(backend="aot_eager")
def f(x):
    return (x * 2).sum()


loss = f(torch.randn(4))
loss.backward()
