# expect: accuracy_mismatch compile_only
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"

model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
x = torch.randn(3, 4)
ref = model(x)
out = torch.compile(model)(x)
if not torch.allclose(out, ref, atol=1e-5):
    raise AssertionError(f"compiled results differ from eager: max abs diff {(out - ref).abs().max():.3g}")
