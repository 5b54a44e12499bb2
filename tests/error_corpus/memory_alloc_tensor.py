# expect: oom fails_eager_too
import torch


@torch.compile(backend="eager")
def f(n):
    return torch.zeros(n, n, dtype=torch.float64).sum()


print(f(3_000_000))
