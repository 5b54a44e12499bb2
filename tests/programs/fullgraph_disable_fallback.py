"""A fallback helper that catches any RuntimeError of a compiled fullgraph function and calls it again. With
TORCH_COMPILE_DISABLE=1, torch 2.14+ runs the function, then raises "found no compiled frames": the in-place
update runs twice per call (blind A/B batch 23: a Lion step applied twice made "eager" look better)."""
import warnings

import torch


def compile_or_eager(fn):
    compiled = torch.compile(fn, fullgraph=True, backend="eager")

    def wrapper(*args):
        try:
            return compiled(*args)
        except RuntimeError as e:
            warnings.warn(f"compiled {fn.__name__} failed ({e}); running eagerly")
            return fn(*args)
    return wrapper


@compile_or_eager
def update(w, g):
    w.sub_(0.1 * g.sign())


w = torch.ones(4)
for _ in range(3):
    update(w, torch.ones(4))
print(f"w after 3 steps: {w[0].item():.2f}")
