"""Bug: Inductor CPU miscompiles log1p (PyTorch's own test hook); raises on a wrong result."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_log1p_bug_TESTING_ONLY = "accuracy"


class WrongResult(Exception):
    pass


def f(x):
    return torch.log1p(x.abs()) * x.cos()


x = torch.randn(16)
if not torch.allclose(torch.compile(f)(x), f(x), atol=1e-4):
    raise WrongResult("compiled log1p differs from eager")
print("ok")
