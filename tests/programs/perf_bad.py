"""Model target whose compile fails: Inductor's own C++ compile-error injection (a test hook)."""
import torch


def make():
    import torch._inductor.config as c
    c.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
    return torch.nn.ReLU(), (torch.randn(8),)
