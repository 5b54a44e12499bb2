"""Only fails compiled: Inductor's C++ compile fails (PyTorch's own test hook)."""
import torch
import torch._inductor.config as inductor_config
import cmd_marker  # noqa: F401

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


@torch.compile
def f(x):
    return torch.relu(x.sin()) + 1


f(torch.randn(8))
