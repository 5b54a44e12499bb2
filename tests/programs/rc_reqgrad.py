"""One requires_grad switch: a layer compiled on its own sees the raw input (no grad) first, then an
activation that requires grad (the pattern left behind when the caller's graph breaks)."""
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    @torch.compile(backend="eager")
    def forward(self, x):
        return self.lin(x).relu()


layer = Layer()
h = layer(torch.randn(4, 8))   # input without grad
out = layer(h)                 # input requires grad (an activation): one recompile
out.sum().backward()
print("ok")
