"""Blind A/B batch 44: a masked-patch pretraining forward snapshots its target with copy.deepcopy before an
in-place mask, under fullgraph=True: GB4198 ("Attempted to copy.deepcopy a tensor"), raised inside copy.py.
The fix is the program's own line (patches.detach().clone(), CLONE=1), not copy's."""
import copy
import os

import torch


class MaskedPatches(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.clone_target = bool(os.environ.get("CLONE"))

    def forward(self, patches, mask):
        target = patches.detach().clone() if self.clone_target else copy.deepcopy(patches.detach())
        patches.masked_fill_(mask.unsqueeze(-1), 0.0)
        return ((self.proj(patches) - target) ** 2).mean()


torch.manual_seed(0)
model = torch.compile(MaskedPatches(), fullgraph=True, backend="eager")
x = torch.randn(4, 8, 16)
loss = model(x, torch.rand(4, 8) < 0.5)
print(f"loss {loss.item():.4f}")
