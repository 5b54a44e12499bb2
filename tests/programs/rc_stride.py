"""Recompile: one data path feeds a transposed view, the other a contiguous tensor of the same shape."""
import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 8)

    def forward(self, feats):
        return self.proj(feats).relu().mean(1)


model = torch.compile(Encoder(), backend="eager")
for step in range(4):
    feats = torch.randn(4, 16, 10).transpose(1, 2) if step % 2 else torch.randn(4, 10, 16)
    model(feats)
