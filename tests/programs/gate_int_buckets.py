"""A parity gate on integer bucket ids computed from floats: values on a 0.1 grid floor-divided by bucket
widths that are multiples of 0.1. Inductor lowers float floor division as floor(a / b) and eager as an
exact floor of the quotient (pytorch#197895), so ids on a bucket edge come out one apart compiled; the gate
compares ids exactly and fails only compiled."""
import sys

import torch


class Bucketizer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("widths", torch.tensor([0.1, 0.2, 0.5]))

    def forward(self, x):
        ids = (x // self.widths).long()
        return ids.clamp(0, 63)


x = torch.arange(0, 64, dtype=torch.float32).mul(0.1).reshape(-1, 1).expand(-1, 3).contiguous()
m = Bucketizer()
eager = m(x)
compiled = torch.compile(m)(x)
bad = (eager != compiled).any(dim=1)
if bad.any():
    print(f"FAIL: bucket ids differ in {int(bad.sum())} of {len(x)} rows")
    sys.exit(1)
print("ok: bucket ids match")
