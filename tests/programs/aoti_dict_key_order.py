"""Build a small AOTInductor package of a model that takes a dict of features {user, item, context}, then serve it
a dict built in another key order (item first), as a serving worker assembles its request: the package binds the
values by position, user and item (same shape) are swapped, and a shadow check against eager fails with no error
from torch (blind A/B batch 39, a ranking worker).
  --ordered   build the request dict in the exported order (the fix)
  --strict    a check that fails anyway (tolerance 0 against eager plus one), a failure that is not the inputs"""
import os
import sys
import tempfile

import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.user, self.item, self.ctx = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(4, 16)

    def forward(self, feats):
        h = torch.relu(self.user(feats["user"]) + self.ctx(feats["context"]))
        return (h * self.item(feats["item"])).sum(-1)


torch.manual_seed(0)
model = Ranker().eval()
example = {"user": torch.randn(8, 16), "item": torch.randn(8, 16), "context": torch.randn(8, 4)}
if "--build" in sys.argv:   # only build the package (and save the model) into DIR, for aoti_dict_serve.py
    out = sys.argv[sys.argv.index("--build") + 1]
    with torch.no_grad():
        torch._inductor.aoti_compile_and_package(torch.export.export(model, (example,)),
                                                 package_path=os.path.join(out, "ranker.pt2"))
    torch.save(model.state_dict(), os.path.join(out, "model.pt"))
    sys.exit(0)
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    ep = torch.export.export(model, (example,))
    runner = torch._inductor.aoti_load_package(
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "ranker.pt2")))
    user, item, context = torch.randn(8, 16), torch.randn(8, 16), torch.randn(8, 4)
    request = {"user": user, "item": item, "context": context} if "--ordered" in sys.argv else \
        {"item": item, "user": user, "context": context}
    diff = (runner(request) - model(request)).abs().max().item()
    print(f"shadow check: max |aoti - eager| = {diff:.3g}")
    sys.exit(1 if diff > (-1 if "--strict" in sys.argv else 1e-4) else 0)
