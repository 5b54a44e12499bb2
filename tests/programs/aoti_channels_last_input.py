"""Build a small AOTInductor package from a contiguous NCHW example, then serve it frames that come from an
HWC camera buffer through permute(0, 3, 1, 2): channels-last strides. Without AOTI_RUNTIME_CHECK_INPUTS=1 the
package reads them as NCHW and disagrees with eager (blind A/B batch 21, a shelf-camera classifier).
  --contiguous   serve x.contiguous() (the fix)
  --strict       a check that fails anyway (tolerance 0 on a sum of logits), to test a failure that is not
                 the input layout"""
import os
import sys
import tempfile

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(8, 4)).eval()
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    ep = torch.export.export(model, (torch.rand(2, 3, 16, 16),))
    pkg = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "m.pt2"))
    runner = torch._inductor.aoti_load_package(pkg)
    frames = torch.randint(0, 256, (2, 16, 16, 3), dtype=torch.uint8)
    x = frames.permute(0, 3, 1, 2).float().div_(255)
    if "--contiguous" in sys.argv:
        x = x.contiguous()
    got, want = runner(x), model(x)
    diff = (got - want).abs().max().item()
    print(f"max |logit diff| {diff:.3g}")
    if "--strict" in sys.argv and got.sum().item() != want.sum().item() + 1:
        sys.exit("strict check failed")
    sys.exit(1 if diff > 1e-4 else 0)
