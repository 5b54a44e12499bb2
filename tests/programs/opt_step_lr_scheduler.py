"""PyTorch's compiled-optimizer recipe with an LR scheduler: a training loop whose optimizer step is a
torch.compile'd function, a warm-up LambdaLR changing the learning rate for the first steps. LR_TENSOR=1
passes the learning rate as a tensor."""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
lr = torch.tensor(1e-3) if os.environ.get("LR_TENSOR") == "1" else 1e-3
opt = torch.optim.AdamW(model.parameters(), lr=lr)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))


@torch.compile(backend="eager")
def opt_step():
    opt.step()


for step in range(6):
    loss = nn.functional.cross_entropy(model(torch.randn(8, 16)), torch.randint(0, 4, (8,)))
    loss.backward()
    opt_step()
    opt.zero_grad(set_to_none=True)
    sched.step()
    print(f"step {step} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e}")
