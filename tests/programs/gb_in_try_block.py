"""A session encoder trims padding with int(lengths.max()) inside a try/except: the graph break is inside a
try block, Dynamo cannot resume there and runs the whole forward eagerly (0 graphs); out of the try, the rest
compiles (blind A/B batch 21)."""
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, items, lengths=None):
        try:
            t = int(lengths.max())
        except AttributeError:
            t = items.shape[1]
        h = torch.relu(self.proj(items[:, :t]))
        return h.mean(dim=1)


torch.manual_seed(0)
model = torch.compile(Encoder(), backend="eager")
items, lengths = torch.randn(4, 12, 16), torch.tensor([12, 7, 5, 9])
for _ in range(3):
    out = model(items, lengths)
print("out", tuple(out.shape), round(out.sum().item(), 4))
