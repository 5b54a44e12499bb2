"""Bug: wrong result from Inductor (relu), but the program only prints it and exits 0."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x.sin()) * 2 + 1


x = torch.randn(16)
got = torch.compile(f)(x)
print("MISMATCH" if not torch.allclose(got, f(x), atol=1e-4) else "ok")
