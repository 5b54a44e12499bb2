"""Exports a small classifier for serving right after training, then checks the exported program
against the eager model in eval mode: the model was still in train mode when exported (blind A/B
batch 19). No torch.compile anywhere."""
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(),
                            torch.nn.Dropout(0.2), torch.nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    x = torch.randn(32, 8)
    loss = torch.nn.functional.cross_entropy(model(x), (x[:, 0] > 0).long())
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"trained: loss {loss.item():.4f}")
ep = torch.export.export(model, (torch.randn(16, 8),))
model.eval()
x = torch.randn(16, 8)
with torch.no_grad():
    diff = (ep.module()(x) - model(x)).abs().max().item()
print(f"exported vs eager max abs diff: {diff:.4f}")
if diff > 1e-4:
    print("exported program does not match the eager model")
    sys.exit(1)
