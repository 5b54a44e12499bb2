"""A tabular MLP with cumulative-average BatchNorm (momentum=None) compiled with fullgraph=True: BatchNorm
reads float(num_batches_tracked), a data-dependent number, and the first step fails."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 32), nn.BatchNorm1d(32, momentum=None), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model, fullgraph=True, backend="eager")
for i in range(3):
    x, y = torch.randn(64, 12), torch.randn(64, 1)
    loss = nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {i} loss {loss.item():.4f}")
