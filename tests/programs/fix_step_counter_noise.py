"""A step counter stored as a Python int on the module, read in forward (recompiles every step up to the
limit, then eager), and randn_like noise in forward: a fix that keeps forward compiled draws compiled
random numbers, so what the program prints changes for that reason alone."""
import torch
from torch import nn

torch.manual_seed(0)
torch._dynamo.config.recompile_limit = 2   # reached in 2 steps (the default 8 only takes longer)


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.step = 0

    def forward(self, x):
        scale = min(1.0, self.step / 4)
        return self.lin(x) + scale * torch.randn_like(x)


model = Noisy()
cmodel = torch.compile(model)
x = torch.randn(4, 8)
for step in range(6):
    model.step = step
    out = cmodel(x)
print(f"final {out.sum().item():.4f}")
