"""Five findings with a no-code-edit config fix each, plus one expected recompile (tests fix/compare)."""
import logging

import torch

logger = logging.getLogger("fx_multi")


@torch.compile(backend="eager")
def scalar(x):
    s = x.sum().item()              # GB0124 -> capture_scalar_outputs
    return x * 2 + s


@torch.compile(backend="eager")
def positives(x):
    idx = torch.nonzero(x > 0)      # GB0036 -> capture_dynamic_output_shape_ops
    return idx.float().sum() + x.sum()


@torch.compile(backend="eager")
def logged(x):
    logger.warning("logged %d", 1)  # GB0291 -> ignore_logging_functions
    return x + 1


@torch.compile(backend="eager")
def printed(x):
    x = x.sin()
    print("printed")                # GB0059 -> reorderable_logging_functions
    return x.cos()


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step = 0

    def forward(self, x):
        self.step += 1              # int attribute -> allow_unspec_int_on_nn_module
        return x + self.step


@torch.compile(backend="eager")
def rows(x):
    return x.sum(0)                 # one batch-size change: expected (automatic dynamic), not a finding


torch.manual_seed(0)
x = torch.arange(8.0) - 3
print("scalar", round(float(scalar(x).sum()), 3))
print("positives", round(float(positives(x)), 3))
print("logged", round(float(logged(x).sum()), 3))
print("printed", round(float(printed(x).sum()), 3))
counter = torch.compile(Counter(), backend="eager")
print("counter", [round(float(counter(x).sum()), 3) for _ in range(3)])
print("rows", [round(float(rows(torch.ones(n, 3)).sum()), 3) for n in (2, 3)])
