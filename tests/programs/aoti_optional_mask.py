"""A query tagger whose forward takes an optional attention mask, exported with the token ids alone and packaged
with AOTInductor; the serving path passes the mask. Export fixed the None mask as a constant: the package takes
one input and holds only the no-mask path, and the serving call fails with "expected inputs vector size to be 1,
but got 2" (blind A/B batch 46). FIXED=1 exports with an example mask (the same dynamic dims), and serving matches
eager. FEWER=1 exports with the mask, serves a masked batch (as FIXED=1 does), then calls without it (the other side:
"expected ... 2, but got 1"). INT32=1 exports with the mask and serves int32 ids and mask (the package was built
for int64 and checks no dtype: its embedding reads past the int32 buffer and raises "index out of bounds"; blind A/B
batch 49)."""
import os
import sys
import tempfile

import torch
import torch.nn as nn
from torch.export import Dim


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16, tags=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, tags)

    def forward(self, input_ids, attention_mask=None):
        h = self.emb(input_ids)
        if attention_mask is None:
            pooled = h.mean(1)
        else:
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled).log_softmax(-1)


torch.manual_seed(0)
model = Tagger().eval()
ids = torch.randint(1, 50, (4, 7))
mask = torch.ones(4, 7, dtype=torch.long)
mask[1, 5:] = 0
batch, seq = Dim("batch", min=1, max=32), Dim("seq", min=2, max=64)
with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
    if os.environ.get("FIXED") or os.environ.get("FEWER") or os.environ.get("INT32"):
        ep = torch.export.export(model, (ids, mask), dynamic_shapes={"input_ids": {0: batch, 1: seq},
                                                                     "attention_mask": {0: batch, 1: seq}})
    else:
        ep = torch.export.export(model, (ids,), dynamic_shapes={"input_ids": {0: batch, 1: seq}})
    runner = torch._inductor.aoti_load_package(
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(tmp, "tagger.pt2")))
    if os.environ.get("INT32"):   # token ids stored as int32 by the offline job
        out = runner(ids.to(torch.int32), mask.to(torch.int32))
    out = runner(ids, mask)
    diff = (out - model(ids, mask)).abs().max().item()
    print(f"max|eager-aoti| = {diff:.3e}")
    if os.environ.get("FEWER"):   # an unpadded single query served without its mask
        runner(ids[:1])
sys.exit("PARITY FAILED" if diff > 1e-4 else 0)
