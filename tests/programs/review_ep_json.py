"""Export a small model with a dynamic batch and write a JSON summary of the graph's node shapes."""
import json
import torch
from torch.export import export, Dim

class M(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.fc = torch.nn.Linear(8, 4)
    def forward(self, x):
        return torch.relu(self.fc(x))

ep = export(M(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("batch", min=1, max=64)}})
summary = {n.name: list(n.meta["val"].shape) for n in ep.graph.nodes
           if isinstance(n.meta.get("val"), torch.Tensor)}
print(json.dumps(summary, indent=1))
