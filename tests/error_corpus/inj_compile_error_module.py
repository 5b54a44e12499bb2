# expect: inductor_compile_error compile_only
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"

model = torch.compile(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()))
print(model(torch.randn(2, 4)))
