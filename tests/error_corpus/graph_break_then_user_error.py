# expect: user_error fails_eager_too
import torch


@torch.compile
def f(x, table):
    print("looking up")                   # a graph break, then a plain bug
    return x * table["scale"]


print(f(torch.randn(3), {"sclae": 2.0}))
