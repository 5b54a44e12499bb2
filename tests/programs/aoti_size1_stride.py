"""An AOTInductor package built from a contiguous (B, 1, 64) example, served a (B, 64, 1) feature map transposed to
(B, 1, 64): the same memory layout (dim 1 has size 1), but its stride there is 1, not 64, which torch's
AOTI_RUNTIME_CHECK_INPUTS check rejects. The program's own check fails for another reason (a tolerance of 0 on a
sum), so the input check's stride is not the cause."""
import os
import sys
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 32), nn.GELU(), nn.Linear(32, 4)).eval()
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    ep = torch.export.export(model, (torch.rand(2, 1, 64),))
    pkg = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"))
    runner = torch._inductor.aoti_load_package(pkg)
    feats = torch.rand(2, 64, 1)
    x = feats.transpose(1, 2)
    got, want = runner(x), model(x)
    print(f"max |diff| {(got - want).abs().max().item():.3g}")
    if got.sum().item() != want.sum().item() + 1:
        sys.exit("strict check failed: sums differ")
