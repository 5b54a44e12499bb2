"""Build an AOTInductor package of a small intent classifier with the deploy settings that keep its weights out of
the .so (aot_inductor.package_constants_in_so=False, with package_constants_on_disk_format="pickle_weights" on 2.14+
or package_constants_on_disk=True on 2.9: the weights become files in the .pt2), load it with aoti_load_package and
smoke-test it against eager. The loader never reads those files: the first call runs on weights never loaded (a
segfault, or garbage) (blind A/B batch 42).
  --fixed   load with load_pt2(..., load_weights_from_disk=True), which reads them
  --dir D   build the package in D (default: a temporary directory, left behind by a crash)"""
import os
import sys
import tempfile

import torch
import torch.nn as nn
from torch._inductor import config as inductor_config


class Intent(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.head = nn.Linear(32, 64), nn.Linear(64, 6)

    def forward(self, x):
        return self.head(torch.tanh(self.emb(x)))


DEPLOY = {"aot_inductor.package_constants_in_so": False}
if hasattr(inductor_config.aot_inductor, "package_constants_on_disk_format"):   # 2.14+
    DEPLOY["aot_inductor.package_constants_on_disk_format"] = "pickle_weights"
else:                                                                             # 2.9
    DEPLOY["aot_inductor.package_constants_on_disk"] = True

torch.manual_seed(0)
model = Intent().eval()
x = torch.randn(4, 32)
with tempfile.TemporaryDirectory(dir=sys.argv[sys.argv.index("--dir") + 1] if "--dir" in sys.argv else None) as tmp, \
        torch.no_grad():
    path = torch._inductor.aoti_compile_and_package(torch.export.export(model, (x,)),
                                                    package_path=os.path.join(tmp, "intent.pt2"),
                                                    inductor_configs=DEPLOY)
    if "--fixed" in sys.argv:
        from torch.export.pt2_archive._package import load_pt2
        runner = load_pt2(path, load_weights_from_disk=True).aoti_runners["model"]
    else:
        runner = torch._inductor.aoti_load_package(path)
    print("loaded package", flush=True)
    diff = (runner(x) - model(x)).abs().max().item()
    print(f"smoke test: max |package - eager| = {diff:.3g}")
    sys.exit(1 if not diff <= 1e-4 else 0)
