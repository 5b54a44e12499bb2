"""A serving loop that runs each request inside a TorchFunctionMode counting ops for a metrics endpoint: Dynamo traces
the mode's __torch_function__ and guards on its counter (`___get_torch_function_mode_stack_at(0).ops_seen == N`),
which grows every request, so every call recompiles until the limit. FIXED=1 returns early while tracing.
(Blind A/B batch 64.)"""
import os

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

FIXED = os.environ.get("FIXED") == "1"


class OpAudit(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.ops_seen = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if FIXED and torch.compiler.is_compiling():
            return func(*args, **kwargs)
        self.ops_seen += 1
        return func(*args, **kwargs)


model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).eval()
compiled = torch.compile(model)
audit = OpAudit()
x = torch.randn(8, 16)
with torch.no_grad():
    for request in range(12):
        with audit:
            out = compiled(x)
print(f"served 12 requests, ops audited: {audit.ops_seen}, out {tuple(out.shape)}")
