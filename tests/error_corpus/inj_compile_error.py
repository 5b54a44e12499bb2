# expect: inductor_compile_error compile_only
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


@torch.compile
def f(x):
    return torch.relu(x) * 2


print(f(torch.randn(8)))
