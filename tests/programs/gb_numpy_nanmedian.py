"""np.nanmedian inside a compiled model (blind A/B batch 40: robust scaling of vital signs with missing readings):
torch._numpy has no nanmedian, so Dynamo breaks the graph there (GB0294), fullgraph=True raises. --torch: the
same scaling with torch.nanmedian, one graph."""
import sys

import numpy as np
import torch


def robust_center(x):
    if "--torch" in sys.argv:
        return x - torch.nanmedian(x, dim=1, keepdim=True).values
    return x - torch.from_numpy(np.nanmedian(x.numpy(), axis=1, keepdims=True))


@torch.compile(backend="eager")
def encode(x, w):
    return torch.nan_to_num(robust_center(x)) @ w


torch.manual_seed(0)
x = torch.randn(4, 7)
x[0, 2] = float("nan")
print(f"encoded sum {encode(x, torch.randn(7, 3)).sum().item():.4f}")
