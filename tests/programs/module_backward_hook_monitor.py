"""A gradient monitor of the program's own: full backward hooks on the layers of an nn.Sequential, called from
torch's Sequential.forward under torch.compile (blind A/B batch 38: a BERT fine-tune's layer monitor)."""
import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
norms = {}


def monitor(name):
    def hook(module, grad_input, grad_output):
        norms[name] = grad_output[0].norm().item()
    return hook


for i, layer in enumerate(model):
    if isinstance(layer, nn.Linear):
        layer.register_full_backward_hook(monitor(f"layer{i}"))

step = torch.compile(model, backend="eager")
x, y = torch.randn(32, 8), torch.randn(32, 1)
loss = ((step(x) - y) ** 2).mean()
loss.backward()
print(f"loss {loss.item():.4f} norms {sorted(norms)}")
