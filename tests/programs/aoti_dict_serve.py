"""A serving program that loads an AOTInductor package built by another script (aoti_dict_key_order.py --build DIR,
run here as a subprocess, so this file holds no export call) and checks it against the eager model on a request
dict in the exported key order; --strict makes the check fail anyway (tolerance below zero): a failure the package's
inputs do not explain, so triage's AOTI check run finds nothing and its Next does not decide whose bug it is."""
import os
import subprocess
import sys
import tempfile

import torch



class Ranker(torch.nn.Module):   # the model aoti_dict_key_order.py exports (its weights come from the build)
    def __init__(self):
        super().__init__()
        self.user, self.item, self.ctx = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16), torch.nn.Linear(4, 16)

    def forward(self, feats):
        h = torch.relu(self.user(feats["user"]) + self.ctx(feats["context"]))
        return (h * self.item(feats["item"])).sum(-1)


with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "aoti_dict_key_order.py"),
                    "--build", tmp], check=True, timeout=900)
    runner = torch._inductor.aoti_load_package(os.path.join(tmp, "ranker.pt2"))
    model = Ranker().eval()
    model.load_state_dict(torch.load(os.path.join(tmp, "model.pt")))
    request = {"user": torch.randn(8, 16), "item": torch.randn(8, 16), "context": torch.randn(8, 4)}
    diff = (runner(request) - model(request)).abs().max().item()
    print(f"shadow check: max |aoti - eager| = {diff:.3g}")
    sys.exit(1 if diff > (-1 if "--strict" in sys.argv else 1e-4) else 0)
