"""Blind A/B batch 45: an activation regularizer registers a GLOBAL forward hook
(torch.nn.modules.module.register_module_forward_hook) at step 4, after the model was compiled: the compiled
graph never calls it, so the penalty is silently 0 compiled and the losses split from eager's.
skip_nnmodule_hook_guards=False does not help a global hook. FIX=1 registers it before the first
compiled call and switches it with a flag (one recompile when the flag turns on)."""
import os
import sys

import torch
import torch.nn as nn
from torch.nn.modules.module import register_module_forward_hook

FIX = bool(os.environ.get("FIX"))


class ActReg:
    def __init__(self):
        self.acts, self.on, self.handle = [], False, None
        if FIX:
            self.handle = register_module_forward_hook(self._collect)

    def _collect(self, module, inputs, output):
        if isinstance(module, nn.GELU) and (self.on or not FIX):
            self.acts.append(output)

    def enable(self):
        self.on = True
        if not FIX:
            self.handle = register_module_forward_hook(self._collect)

    def penalty(self):
        p = sum((a * a).mean() for a in self.acts) if self.acts else torch.zeros(())
        self.acts = []
        return p

    def close(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


def train(compiled):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 2))
    run = torch.compile(model, backend="eager") if compiled else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    reg, losses = ActReg(), []
    data = torch.randn(8, 16, 8, generator=torch.Generator().manual_seed(1))
    for step in range(8):
        if step == 4:
            reg.enable()
        loss = run(data[step]).pow(2).mean() + 0.5 * reg.penalty()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    reg.close()
    return losses


eager, compiled = train(False), train(True)
diff = max(abs(a - b) for a, b in zip(eager, compiled))
print(f"max |loss diff| = {diff:.5f}; step 4 eager {eager[4]:.5f} compiled {compiled[4]:.5f}")
sys.exit(0 if diff < 1e-4 else 1)
