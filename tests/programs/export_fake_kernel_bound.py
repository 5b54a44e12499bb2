"""A pooling custom op whose fake kernel branches on the history length (`k if L >= k else L`): export with
hist_len in [1, 64] from a 20-item example fails ("Constraints violated (hist_len)") and suggests
`Dim('hist_len', min=4, max=64)`, which would make the exported program reject short histories. The guard
comes from the fake kernel, not the model. FIXED=1 registers a fake kernel with no branch on the size. TWO=1 also
exports the batch dim and branches on it in forward (`if hist.shape[0] >= 4`): two Dims bounded at 4, each guard
from its own line."""
import os

import torch
import torch.nn as nn
from torch.export import Dim, export


@torch.library.custom_op("cdtest::topk_pool", mutates_args=())
def topk_pool(hist: torch.Tensor, k: int) -> torch.Tensor:
    return hist.topk(min(k, hist.shape[1]), dim=1).values.mean(1)


if os.environ.get("FIXED") == "1":
    @topk_pool.register_fake
    def _(hist, k):
        return hist.new_empty(hist.shape[0], hist.shape[2])
else:
    @topk_pool.register_fake
    def _(hist, k):
        kk = k if hist.shape[1] >= k else hist.shape[1]
        return hist.new_empty(hist.shape[0], hist.shape[2]) * kk


class Pooler(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, hist):
        pooled = torch.ops.cdtest.topk_pool(hist, 4)
        if os.environ.get("TWO") == "1" and hist.shape[0] >= 4:
            pooled = pooled - pooled.mean(0)
        return self.proj(pooled)


if os.environ.get("TWO") == "1":
    ep = export(Pooler(), (torch.randn(8, 20, 8),),
                dynamic_shapes={"hist": {0: Dim("batch", min=1, max=64), 1: Dim("hist_len", min=1, max=64)}})
else:
    ep = export(Pooler(), (torch.randn(2, 20, 8),), dynamic_shapes={"hist": {1: Dim("hist_len", min=1, max=64)}})
print("exported:", ep.module()(torch.randn(2, 3, 8)).shape)
