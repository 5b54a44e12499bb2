"""Exports a small patch-embedding classifier for serving at any batch size, with Dim("batch") on dim 0,
but traces it with one sample: export fails "specialized it to be a constant (1)"."""
import torch
import torch.nn as nn
from torch.export import Dim, export


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 32, kernel_size=8, stride=8)
        self.cls = nn.Parameter(torch.zeros(1, 1, 32))
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(x.shape[0], -1, -1), t], dim=1)
        t, _ = self.attn(t, t, t)
        return self.head(t[:, 0])


model = Classifier().eval()
sample = torch.randn(3, 32, 32).unsqueeze(0)
ep = export(model, (sample,), dynamic_shapes={"x": {0: Dim("batch", max=256)}})
print(ep.range_constraints)
