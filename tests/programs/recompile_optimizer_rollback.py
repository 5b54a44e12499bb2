"""A training loop with a compiled AdamW step that rolls back to its last checkpoint every 4 steps (a loss-spike
guard): opt.load_state_dict puts new state tensors in place, and the compiled step guards on their identity, so
each rollback compiles it again. IN_PLACE=1 copies the loaded state into the existing tensors instead."""
import copy
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.AdamW(model.parameters(), lr=torch.tensor(1e-2))


@torch.compile(backend="eager")
def opt_step():
    opt.step()


def restore(saved):
    if os.environ.get("IN_PLACE") == "1":
        for p, s in zip(model.parameters(), saved["opt"]["state"].values()):
            for k, v in s.items():
                opt.state[p][k].copy_(v)
    else:
        opt.load_state_dict(copy.deepcopy(saved["opt"]))
    model.load_state_dict(saved["model"])


x, y = torch.randn(64, 8), torch.randn(64, 1)
saved = None
for step in range(14):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt_step()
    opt.zero_grad()
    if step == 1:
        saved = {"model": copy.deepcopy(model.state_dict()), "opt": copy.deepcopy(opt.state_dict())}
    elif step % 4 == 1:
        restore(saved)
        print(f"step {step}: rolled back")
print(f"final loss {loss.item():.4f}")
