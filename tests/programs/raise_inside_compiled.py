"""The program's own ValueError, raised in a helper that a compiled function calls: the traceback passes through
torch/_dynamo/eval_frame.py, its innermost frame is the program's (triage --from-text: the program's own code)."""
import torch


def check(x):
    if x.shape[0] > 3:
        raise ValueError(f"batch too large: {x.shape[0]}")
    return x


@torch.compile(backend="eager")
def step(x):
    return check(x).sin() + 1


print(step(torch.ones(2)))
print(step(torch.ones(5)))
