"""Not a silent difference: the eager reference copies the module's weights before compiling it, so the
state_dict is the module's own (no "_orig_mod." prefix); compiled and eager agree."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
reference = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
reference.load_state_dict(model.state_dict())
model = torch.compile(model, backend="eager")
x = torch.randn(4, 8)
print("match eager:", torch.allclose(model(x), reference(x), atol=1e-6))
