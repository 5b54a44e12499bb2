"""Bug (GPU): Inductor's Triton codegen miscompiles relu (PyTorch's own test hook). Exits 1 on a wrong result."""
import sys

import torch
import torch._inductor.config as inductor_config

inductor_config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x.sin()) * 2 + 1


x = torch.randn(1024, device="cuda")
got = torch.compile(f)(x)
if not torch.allclose(got, f(x), atol=1e-4):
    print("MISMATCH: compiled result differs from eager", file=sys.stderr)
    sys.exit(1)
print("ok")
