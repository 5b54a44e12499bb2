"""Regional compilation of repeated conv blocks whose convs are weight-normed (blind A/B batch 52, torchtitan PR
2754): torch.nn.utils.parametrize gives each conv its own class (ParametrizedConv1d), so the block's compiled code
fails the type guard on every next block. FOLD=1: remove_parametrizations(leave_parametrized=True) before compiling
(the advice): one graph serves every block. Prints the graph count and the largest difference from eager."""
import os

import torch
from torch import nn
from torch.nn.utils import parametrize
from torch.nn.utils.parametrizations import weight_norm


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = weight_norm(nn.Conv1d(c, c, 3, padding=1))

    def forward(self, x):
        return x + torch.tanh(self.conv(x))


torch.manual_seed(0)
blocks = nn.ModuleList(Block(8) for _ in range(5)).eval()
x = torch.randn(2, 8, 32)
with torch.no_grad():
    ref = x
    for b in blocks:
        ref = b(ref)
    if os.environ.get("FOLD") == "1":
        for b in blocks:
            parametrize.remove_parametrizations(b.conv, "weight", leave_parametrized=True)
    for b in blocks:
        b.compile(backend="eager")
    out = x
    for b in blocks:
        out = b(out)
from torch._dynamo.utils import counters  # noqa: E402
print(f"graphs {counters['stats']['unique_graphs']} max diff {(out - ref).abs().max().item():.1e}")
