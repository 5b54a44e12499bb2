# expect: user_error fails_eager_too
import torch

TABLE = {"relu": torch.relu, "tanh": torch.tanh}


@torch.compile(backend="eager")
def act(x, name):
    return TABLE[name](x)


print(act(torch.randn(3), "gelu"))
