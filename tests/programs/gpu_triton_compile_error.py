"""CUDA: Triton kernel compile error injected with PyTorch's own test hook."""
import torch
import torch._inductor.config as inductor_config

inductor_config.triton.inject_relu_bug_TESTING_ONLY = "compile_error"


@torch.compile
def f(x):
    return torch.relu(x.sin()) + 1


f(torch.randn(64, device="cuda"))
