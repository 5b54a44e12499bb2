"""Error: runtime error in Inductor-generated code, injected with PyTorch's own test hook."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


@torch.compile
def f(x):
    return torch.relu(x.sin()) + 1


f(torch.randn(8))
