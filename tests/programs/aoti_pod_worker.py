"""One serving pod of aoti_pods.py: load the package, score one batch, print the load time."""
import sys
import time

import torch

t0 = time.perf_counter()
runner = torch._inductor.aoti_load_package(sys.argv[1])
load_s = time.perf_counter() - t0
scores = runner(torch.randint(0, 100, (4, 6)))
print(f"load {load_s:.2f} s, scores {tuple(scores.shape)}")
