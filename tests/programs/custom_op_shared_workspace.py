"""A dual encoder whose L2 normalization is a custom op writing into a workspace kept per shape (blind A/B batch 52):
both towers' outputs have one shape, so both calls return the same storage. Eager reads the query result (its scale)
before the document call; Inductor runs both calls first and then the fused scaling, so queries become documents.
The program compares compiled with eager and exits 1. FIXED=1: the op returns torch.empty_like(x)."""
import os
import sys

import torch
from torch import nn

FIXED = os.environ.get("FIXED") == "1"
_workspaces = {}


def _workspace(shape, dtype):
    key = (tuple(shape), dtype)
    if key not in _workspaces:
        _workspaces[key] = torch.empty(shape, dtype=dtype)
    return _workspaces[key]


@torch.library.custom_op("tcase::l2_normalize", mutates_args=())
def l2_normalize(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x) if FIXED else _workspace(x.shape, x.dtype)
    torch.div(x, torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(1e-6), out=out)
    return out


@l2_normalize.register_fake
def _(x):
    return torch.empty_like(x)


class DualEncoder(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q, self.d = nn.Linear(d, d), nn.Linear(d, d)
        self.q_scale, self.d_scale = nn.Parameter(torch.tensor(1.5)), nn.Parameter(torch.tensor(0.5))

    def forward(self, queries, docs):
        q = l2_normalize(self.q(queries)) * self.q_scale
        d = l2_normalize(self.d(docs)) * self.d_scale
        return q @ d.T


torch.manual_seed(0)
model = DualEncoder().eval()
queries, docs = torch.randn(8, 16), torch.randn(8, 16)
with torch.no_grad():
    eager = model(queries, docs)
    compiled = torch.compile(model)(queries, docs)
diff = (compiled - eager).abs().max().item()
print(f"max |compiled - eager| = {diff:.3e}")
if diff > 1e-4:
    sys.exit("compiled scores disagree with eager")
print("agree")
