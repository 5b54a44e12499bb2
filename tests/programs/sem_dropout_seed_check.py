"""A reproducibility test of a compiled training step: run one step eagerly and one compiled from the
same seed and the same weights, and require identical losses. The model uses dropout; Inductor draws
its dropout masks with its own RNG, so the losses differ only compiled."""
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)
base = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Dropout(0.1), nn.Linear(128, 128), nn.GELU(),
                     nn.Dropout(0.1), nn.Linear(128, 10))
x, y = torch.randn(64, 32), torch.randint(0, 10, (64,))


def train_step(model, opt):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


ref = copy.deepcopy(base)
torch.manual_seed(123)
loss_ref = train_step(ref, torch.optim.SGD(ref.parameters(), lr=0.1))

model = copy.deepcopy(base)
step = torch.compile(train_step)
torch.manual_seed(123)
loss = step(model, torch.optim.SGD(model.parameters(), lr=0.1))
if not torch.allclose(loss, loss_ref, rtol=1e-5, atol=1e-6):
    raise SystemExit(f"MISMATCH: compiled loss {loss.item():.6f} vs reference {loss_ref.item():.6f}")
print("losses match:", loss.item())
