"""Clips of different lengths, compiled with dynamic=False and the length marked dynamic in the collate
function, on the float64 batch it builds; the loop then converts it with .to(dtype=torch.float32), a new tensor
without the mark, so every length recompiles. FIXED=1 marks the tensor passed to the model instead."""
import os

import torch
import torch.nn as nn


def collate(clips):
    batch = torch.nn.utils.rnn.pad_sequence(clips, batch_first=True).double()
    torch._dynamo.mark_dynamic(batch, 1)
    return batch


class Tagger(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.proj = nn.Linear(d, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, feats):
        return self.head(torch.relu(self.proj(feats)).mean(1))


torch.manual_seed(0)
model = torch.compile(Tagger().eval(), dynamic=False, backend="eager")
with torch.no_grad():
    for n in (20, 23, 27, 31, 35):
        feats = collate([torch.randn(n - i, 8) for i in range(4)]).to(dtype=torch.float32)
        if os.environ.get("FIXED") == "1":
            torch._dynamo.mark_dynamic(feats, 1)
        print(n, model(feats).sum().item() != 0)
