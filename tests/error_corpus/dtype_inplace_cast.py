# expect: dtype_mismatch fails_eager_too
import torch


@torch.compile(backend="eager")
def f(counts):
    counts += 0.5
    return counts


print(f(torch.zeros(3, dtype=torch.long)))
