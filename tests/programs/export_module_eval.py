"""A serving script loads an intent classifier exported after model.eval() (dropout, batch norm) and calls .eval() on
ep.module(), as it would on any model: ExportedProgram.module() makes .eval() and .train() raise ("Calling eval() is
not supported yet."), since the mode was fixed at export (blind A/B batch 47). FIXED=1 drops the call: the loaded
module matches the eval-mode model."""
import io
import os

import torch
import torch.nn as nn


class Intent(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
model = Intent().eval()
x = torch.randn(8, 16)
buf = io.BytesIO()
torch.export.save(torch.export.export(model, (x,)), buf)
buf.seek(0)
served = torch.export.load(buf).module()
if not os.environ.get("FIXED"):
    served.eval()
print(f"max|diff| vs eval model = {(served(x) - model(x)).abs().max().item():.2e}")
