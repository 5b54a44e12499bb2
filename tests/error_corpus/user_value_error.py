# expect: user_error fails_eager_too
import torch


@torch.compile(backend="eager")
def normalize(x, mode):
    if mode == "l2":
        return x / x.norm()
    raise ValueError(f"unknown mode {mode!r}")


print(normalize(torch.randn(3), "l3"))
