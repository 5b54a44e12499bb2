"""A rollout stand-in: `--export PKG` builds an AOTInductor package of a small ranker; `PKG` starts a serving
"pod", a process of its own that loads the package (aoti_pod_worker.py) and prints its load time.
Nothing is compiled at run time; on torch 2.14/2.15 the load checks the CPU's features with g++ test programs
in the Inductor cache dir (blind A/B batch 36: each fresh pod paid ~10 s)."""
import os
import subprocess
import sys
import time

import torch


class Ranker(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(100, 16, mode="mean")
        self.mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def forward(self, ids):
        return self.mlp(self.emb(ids)).sigmoid()


if sys.argv[1] == "--export":
    torch.manual_seed(0)
    ep = torch.export.export(Ranker().eval(), (torch.randint(0, 100, (4, 6)),))
    torch._inductor.aoti_compile_and_package(ep, package_path=sys.argv[2])
    print("exported", sys.argv[2])
else:
    here = os.path.dirname(os.path.abspath(__file__))
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, os.path.join(here, "aoti_pod_worker.py"), sys.argv[1]],
                         capture_output=True, text=True, timeout=600)
    print(f"pod: exit {out.returncode}, ready in {time.perf_counter() - t0:.2f} s; {out.stdout.strip()}")
