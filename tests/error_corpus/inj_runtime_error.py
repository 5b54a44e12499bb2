# expect: compiled_runtime_error compile_only
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


@torch.compile
def f(x):
    return torch.relu(x) + 1


print(f(torch.randn(8)))
