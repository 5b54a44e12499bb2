"""Bug: Inductor CPU miscompiles relu (PyTorch's own test hook), caught by the program's assert."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"

torch.manual_seed(0)
lin = torch.nn.Linear(16, 8)
x = torch.randn(4, 16)
ref, out = lin(x).relu(), torch.compile(lambda t: lin(t).relu())(x)
assert torch.allclose(ref, out, atol=1e-5), "compiled output differs from eager"
