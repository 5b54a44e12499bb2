# expect: accuracy_mismatch compile_only
import torch
import torch._inductor.config as inductor_config

# (in the user's real code this is a subtle Inductor miscompile; the hook reproduces one for the eval)
inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


torch.manual_seed(0)
m = MLP()
x = torch.randn(8, 16)
ref, out = m(x), torch.compile(m)(x)
print("max abs diff", (ref - out).abs().max().item())
assert torch.allclose(ref, out, atol=1e-5), "compiled output differs from eager"
