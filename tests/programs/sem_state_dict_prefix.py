"""Silent by design: a checkpoint saved from the torch.compile wrapper has "_orig_mod."-prefixed keys;
loaded into the plain model with strict=False, no weight loads and evaluation runs the random init."""
import os
import tempfile

import torch

torch.manual_seed(0)
x, y = torch.randn(64, 8), torch.randn(64, 1)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
cmodel = torch.compile(model, backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(20):
    loss = torch.nn.functional.mse_loss(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
torch.save(cmodel.state_dict(), path)
fresh = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
missing, unexpected = fresh.load_state_dict(torch.load(path), strict=False)
with torch.no_grad():
    print(f"trained loss {loss.item():.4f}, reloaded loss {torch.nn.functional.mse_loss(fresh(x), y).item():.4f}, "
          f"{len(missing)} missing keys")
