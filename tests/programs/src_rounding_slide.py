"""Source-stage test program: a CI gate that compares compiled with eager and fails on a real
miscompile (Inductor's C++ relu made wrong by PyTorch's own test hook): the difference is of order
thousands. tests/test_source_minify.py makes the candidate a weak reducer slides to (no hook, a zero
tolerance: any rounding difference, ~3e-4 here, now fails it) and checks that the oracle refuses it."""
import sys

import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(torch.nn.functional.layer_norm(x, (512,))).sum(dim=0)


x = torch.randn(4096, 512, generator=torch.Generator().manual_seed(0))
eager, compiled = f(x), torch.compile(f)(x)
diff = (eager - compiled).abs().max().item()
if diff > 0.01:
    print(f"MISMATCH: max diff {diff:.3g}")
    sys.exit(1)
print("ok")
