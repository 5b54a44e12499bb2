"""A prototype bank updated in place by a compiled function that also gets a slice of the same bank as a second
input and returns a view of it: AOTAutograd merges the two inputs into one base and rebuilds the returned view
from the whole bank ("incorrect out shape after application of ViewMeta sequence", pytorch#198095, open on 2.15).
FIXED=1 passes the bank alone and slices inside."""
import os

import torch


@torch.compile(backend="aot_eager")
def refresh(bank, known, feats, momentum: float = 0.9):
    bank.mul_(momentum).add_(feats, alpha=1 - momentum)
    return known.t()


@torch.compile(backend="aot_eager")
def refresh_fixed(bank, feats, momentum: float = 0.9):
    bank.mul_(momentum).add_(feats, alpha=1 - momentum)
    return bank[1:].t()


bank = torch.zeros(5, 8)
feats = torch.randn(5, 8)
w = refresh_fixed(bank, feats) if os.environ.get("FIXED") == "1" else refresh(bank, bank[1:], feats)
print("weight", tuple(w.shape))
