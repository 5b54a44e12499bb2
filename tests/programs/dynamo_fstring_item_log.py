"""A monitoring helper logs two statistics with a format spec on `.item()` values, at DEBUG (off).
The f-string is built on every call anyway: each .item() breaks the graph, and on torch 2.15 the
second call (the float now dynamic) crashes Dynamo itself: InternalTorchDynamoError, "Unknown format
code 'f' for object of type 'str'" (blind A/B batch 9, pytorch#197093). Without torch.compile it runs."""
import logging

import torch

log = logging.getLogger("monitor")


@torch.compile(backend="eager")
def monitored(x):
    log.debug(f"absmax={x.abs().max().item():.3f} "
              f"rms={x.pow(2).mean().sqrt().item():.3f}")
    return x * 2


torch.manual_seed(0)
for step in range(3):
    out = monitored(torch.randn(8))
print("done", float(out.sum()))
