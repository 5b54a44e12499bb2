"""A training loop with dropout (Inductor's CPU random-number kernels) and a graph break in forward (a .item() read
into Python): perf's script view names the break, not fallback_random (blind A/B batch 53: that hint was tried first
and made the step 2x slower, while a graph break was the slowdown)."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.drop = nn.Linear(32, 64), nn.Linear(64, 1), nn.Dropout(0.1)

    def forward(self, x):
        h = self.drop(torch.relu(self.a(x)))
        if h.mean().item() > 10.0:
            h = h * 0.5
        return self.b(h)


torch.manual_seed(0)
model = torch.compile(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 32), torch.randn(64, 1)
for step in range(4):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}")
