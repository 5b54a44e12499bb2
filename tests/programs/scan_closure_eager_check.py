"""A recurrence written with torch's scan whose step function uses an outside parameter. Compiled, Inductor's
scan-to-while_loop pass reads the loop index with .item() and fails unless capture_scalar_outputs is on (torch
2.15; blind A/B batch 24). With compiling switched off by torch (force_eager, TORCH_COMPILE_DISABLE) scan still
traces the step function and fails on the outside tensor, while the program without torch.compile runs: the
eager check cannot judge it (--no-compile runs it as written)."""
import sys

import torch
from torch import nn
from torch._higher_order_ops.scan import scan


class Recurrence(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.decay = nn.Parameter(torch.full((d,), 0.9))
        self.proj = nn.Linear(d, d)

    def forward(self, xs):
        def step(h, x):
            h = self.decay * h + x
            return h, h.clone()
        _, hs = scan(step, torch.zeros(xs.shape[1:]), self.proj(xs))
        return hs


torch.manual_seed(0)
model = Recurrence()
run = model if "--no-compile" in sys.argv else torch.compile(model)
out = run(torch.randn(6, 2, 8))
out.sum().backward()
print(f"sum {out.sum().item():.4f}")
