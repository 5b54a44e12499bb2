"""An exported classifier whose forward takes an input it does not name (it lands in **kwargs, as an attention_mask
given to transformers' FNet), exported with dynamic sizes tied to the named input's (blind A/B batch 58's em): export
succeeds, and ep.module()'s generated input check (_guards_fn) raises NameError: name 'L' is not defined on its first
call, whatever the shape (pytorch PR #186879). FIXED=1: export only the inputs forward names."""
import os

import torch
import torch.nn as nn
from torch.export import Dim


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, input_ids=None, **kwargs):
        return self.head(self.emb(input_ids).mean(1))


def serving_inputs(b, t):
    ids = torch.randint(0, 50, (b, t))
    if os.environ.get("FIXED") == "1":
        return {"input_ids": ids}
    return {"input_ids": ids, "attention_mask": torch.ones(b, t, dtype=torch.long)}


torch.manual_seed(0)
model = Classifier().eval()
batch, seq = Dim("batch", max=64), Dim("seq", max=128)
example = serving_inputs(4, 16)
shapes = {k: {0: batch, 1: seq} for k in example}
ep = torch.export.export(model, (), kwargs=example, dynamic_shapes={"input_ids": shapes["input_ids"],
                                                                     "kwargs": {k: v for k, v in shapes.items()
                                                                                if k != "input_ids"}}
                         if len(example) > 1 else {"input_ids": shapes["input_ids"]})
served = ep.module()
inp = serving_inputs(4, 16)
diff = (served(**inp) - model(**inp)).abs().max().item()
print(f"parity max diff {diff:.2e}")
