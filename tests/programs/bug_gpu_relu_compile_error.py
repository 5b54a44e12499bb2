"""Bug (GPU): Inductor's Triton codegen fails to compile relu (PyTorch's own test hook)."""
import torch
import torch._inductor.config as inductor_config

inductor_config.triton.inject_relu_bug_TESTING_ONLY = "compile_error"


def f(x):
    y = x.sin() * 2
    return torch.relu(y) + x.cos()


print(torch.compile(f)(torch.randn(1024, device="cuda")).sum().item())
