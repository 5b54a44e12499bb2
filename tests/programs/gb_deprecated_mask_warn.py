"""A block that accepts an old-style float padding mask and warns (DeprecationWarning) before converting it; the
training data builds float masks, so every call takes that path and warnings.warn breaks the graph (fullgraph=True
fails). Eager hides the warning (a DeprecationWarning raised outside __main__ is not shown by default). (Blind A/B
batch 39: an ECG tagger.)
  --bool   the data builds the bool mask the block expects (the fix): one graph"""
import sys
import warnings

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def _prepare_mask(self, mask):
        if mask.dtype != torch.bool:
            warnings.warn("float masks are deprecated; pass a bool mask (True = padded)", DeprecationWarning)
            mask = mask < 0.5
        return mask

    def forward(self, x, mask):
        mask = self._prepare_mask(mask)
        return self.lin(x).masked_fill(mask.unsqueeze(-1), 0.0)


block = torch.compile(Block(), fullgraph=True, backend="eager")
x = torch.randn(4, 10, 8)
valid = torch.arange(10) < 7
mask = ~valid.expand(4, 10) if "--bool" in sys.argv else valid.expand(4, 10).float()
print(f"out sum {block(x, mask).sum().item():.4f}")
