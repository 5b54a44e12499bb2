"""An ablation scan on a compiled model: each pass replaces Block.forward on the class (sem_patch_helpers.skip_mlp)
after the model was compiled. Dynamo guards the module's type, not the function on its class (pytorch#197860),
so the compiled run keeps the first graph and every ablation prints the baseline (blind A/B batch 23)."""
import sys

import torch
from torch import nn

from sem_patch_helpers import skip_mlp


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(16, 16), nn.Tanh())

    def forward(self, x):
        return x + self.mlp(x)


torch.manual_seed(0)
model = nn.Sequential(Block(), Block(), nn.Linear(16, 1)).eval()
if "--eager" not in sys.argv:
    model = torch.compile(model)
x = torch.randn(8, 16)
with torch.no_grad():
    print(f"baseline {model(x).sum().item():.4f}")
    with skip_mlp(Block):
        print(f"ablated  {model(x).sum().item():.4f}")
