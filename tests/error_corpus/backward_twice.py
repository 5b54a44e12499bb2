# expect: autograd_misuse fails_eager_too
import torch

w = torch.randn(4, requires_grad=True)


@torch.compile(backend="aot_eager")
def f(w):
    return (w.exp() * 2).sum()


loss = f(w)
loss.backward()
loss.backward()
