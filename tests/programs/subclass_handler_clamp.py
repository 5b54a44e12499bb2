"""A saturating-accumulator Tensor subclass (blind A/B batch 55, pytorch#176679): its __torch_function__ clamps every
linear/add result with out.clamp(...), which eagerly dispatches back to the handler. While Dynamo traces the handler,
subclass dispatch is off, so the clamp returns a plain Tensor and the ops after it run unclamped: compiled prints
other numbers than eager, with backend="eager" too. FIXED=1: the clamp goes through super().__torch_function__. EAGER=1: not compiled."""
import os

import torch
import torch.nn.functional as F

LIMIT = 4.0
_ACC = {F.linear, torch.add, torch.Tensor.add, torch.Tensor.__add__}


class Saturating(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if func in _ACC and isinstance(out, torch.Tensor):
            if os.environ.get("FIXED") == "1":
                out = super().__torch_function__(torch.Tensor.clamp, types, (out, -LIMIT, LIMIT), {})
            else:
                out = out.clamp(-LIMIT, LIMIT)
        return out


def net(x, w1, w2):
    h = F.linear(x, w1)
    h = h + h
    return F.linear(h, w2)


torch.manual_seed(0)
x = (torch.randn(4, 8) * 3).as_subclass(Saturating)
w1, w2 = torch.randn(8, 8), torch.randn(3, 8)
run = net if os.environ.get("EAGER") == "1" else torch.compile(net, backend="eager", fullgraph=True)
y = run(x, w1, w2)
print(f"out max |y| {y.abs().max().item():.4f} type {type(y).__name__}")
