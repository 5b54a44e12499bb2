# expect: accuracy_mismatch compile_only
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


def f(x):
    return torch.relu(x) * 2


x = torch.randn(16)
torch.testing.assert_close(torch.compile(f)(x), f(x))
