"""A release gate for a "bf16" exported model (blind A/B batch 55, pytorch#108173): torch.export.export is called
inside torch.autocast, which the exported program does not record, so it computes in float32 and the gate,
comparing with the model run under bf16 autocast, fails. FIXED=1: autocast entered inside a wrapper's forward,
which export records."""
import os
import sys

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 5))

    def forward(self, x):
        return self.net(x)


class Bf16(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return self.inner(x)


def export_bf16(model, x):
    if os.environ.get("FIXED") == "1":
        return torch.export.export(Bf16(model), (x,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return torch.export.export(model, (x,))


torch.manual_seed(0)
model = Scorer().eval()
x = torch.randn(16, 32)
ep = export_bf16(model, x)
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    ref = model(x)
with torch.no_grad():
    out = ep.module()(x)
diff = (out.float() - ref.float()).abs().max().item()
print(f"exported dtype {out.dtype}, reference dtype {ref.dtype}, max |diff| {diff:.4f}")
if diff > 1e-3:
    sys.exit("GATE FAILED: exported model differs from the bf16 reference")
print("GATE PASSED")
