"""An AOTInductor package exported with keyword inputs (a, b) and called with them in another order: `a` is a
transposed view (a real stride mismatch, read wrong), `b` has size 1 at dim 0. torch numbers the inputs in the
exported order, so the input check's input_handles[0] is `a`, not the first keyword given."""
import os
import sys
import tempfile

import torch
from torch import nn


class M(nn.Module):
    def forward(self, a, b):
        return torch.sin(a) * 2 + b


torch.manual_seed(0)
m = M().eval()
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    ep = torch.export.export(m, (), {"a": torch.rand(4, 8), "b": torch.rand(1, 8)})
    pkg = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"))
    runner = torch._inductor.aoti_load_package(pkg)
    batch = {"b": torch.rand(1, 8), "a": torch.rand(8, 4).t()}
    got, want = runner(**batch), m(**batch)
    print(f"max |diff| {(got - want).abs().max().item():.3g}")
    if not torch.allclose(got, want, atol=1e-4):
        sys.exit("outputs differ")
