"""A small training script with the torch.compile problems real code has (the bundled example
that `compile_debug.py triage` runs when given no target).

- a debug print inside forward                      -> graph break
- `if loss.item() > ...` style data-dependent check -> graph break
- a step counter attribute read in forward           -> recompiles every step (hits the limit)
- the last batch is smaller                          -> shape recompile
- evaluation under torch.no_grad()                   -> grad-mode recompile
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch._dynamo.config.recompile_limit = 4  # keep the example short; the default is 8


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)
        self.step = 0                       # python int read in forward: guarded as a constant

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("hidden mean", h.mean().item())  # graph break (print + .item())
        if h.sum() > 0:                     # data-dependent branch: graph break
            h = h * 1.0
        return self.fc2(h) * (1.0 + 0.0 * self.step)


model = TinyNet()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model)

data = [torch.randn(8, 16) for _ in range(5)] + [torch.randn(5, 16)]  # last batch is smaller
for x in data:
    loss = compiled(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    model.step += 1

with torch.no_grad():
    compiled(torch.randn(8, 16))
print("done")
