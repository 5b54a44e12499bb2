"""An encoder block that keeps its saved activations in bf16 with torch.autograd.graph.saved_tensors_hooks entered
inside its forward, trained under torch.compile(fullgraph=True): Dynamo skips saved_tensors_hooks, so the first step
raises (blind A/B batch 47)."""
import torch
import torch.nn as nn


def pack(t):
    return t.to(torch.bfloat16) if t.dtype == torch.float32 and t.numel() >= 64 else t


def unpack(t):
    return t.to(torch.float32) if t.dtype == torch.bfloat16 else t


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            return x + self.ff(x)


model = nn.Sequential(Block(), Block())
step = torch.compile(model, fullgraph=True, backend="eager")
loss = step(torch.randn(8, 16)).pow(2).mean()
loss.backward()
print(f"loss {loss.item():.4f}")
