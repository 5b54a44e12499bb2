"""Stochastic weight averaging with torch.optim.swa_utils.AveragedModel, which deep-copies the model. With
--compile (the default) the script compiles by rebinding the instance's forward before building the average,
so the copy keeps the live model's bound forward: the averaged model evaluates the live weights, and its loss
equals the live loss (with --no-compile it lags). Compilation itself changes nothing it prints."""
import argparse

import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel

p = argparse.ArgumentParser()
p.add_argument("--compile", action="store_true", default=True)
p.add_argument("--no-compile", dest="compile", action="store_false")
args = p.parse_args()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
if args.compile:
    model.forward = torch.compile(model.forward)
swa = AveragedModel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randn(64, 1)
for epoch in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    swa.update_parameters(model)
    with torch.no_grad():
        live, avg = nn.functional.mse_loss(model(x), y).item(), nn.functional.mse_loss(swa(x), y).item()
    print(f"epoch {epoch} live {live:.4f} swa {avg:.4f}")
