"""Only fails compiled, on a Python value: a compiled function that returns a generator gets back an
iterator of the yielded values, and the generator's return value is lost (pytorch#198190, torch
2.9-2.15); reading StopIteration.value gives None."""
import torch


def steps(x, n):
    for _ in range(n):
        x = torch.tanh(x * 1.5)
        yield x
    return x.sum()


@torch.compile(backend="eager")
def run(x):
    return steps(x, 3)


gen = run(torch.ones(4))
while True:
    try:
        next(gen)
    except StopIteration as stop:
        final = stop.value
        break
print("final", final.item())
