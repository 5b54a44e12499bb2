# expect: user_error fails_eager_too
import torch


@torch.compile
def f(x):
    return torch.log(x)


y = f(torch.tensor([1.0, -1.0]))
if torch.isnan(y).any():
    raise RuntimeError("loss is NaN; stopping")
