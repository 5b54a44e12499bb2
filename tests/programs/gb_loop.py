"""Graph break inside a loop: one break site hit on every iteration."""
import torch


def log_value(v):
    print(f"value {v}")


@torch.compile(backend="eager")
def f(x):
    for i in range(4):
        x = x * 2
        log_value(i)
    return x


f(torch.randn(4))
