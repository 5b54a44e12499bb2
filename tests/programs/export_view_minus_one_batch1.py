"""A ranker exported with a batch Dim(min=1) whose packed input holds 5 fields per sample (5 * batch) and splits it
with view(5, -1, D) (blind A/B batch 59's er, pytorch#181097): the -1's arithmetic asks whether the packed size is 5,
export keeps the guard "packed.size()[0] != 5" without a constraint error, and the exported program refuses batch 1.
FIXED=1: view(5, user.shape[0], D)."""
import os

import torch
import torch.nn as nn
from torch.export import Dim

FIELDS, D = 5, 8


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(D, 1)

    def forward(self, packed, user):
        if os.environ.get("FIXED") == "1":
            fields = packed.view(FIELDS, user.shape[0], D)
        else:
            fields = packed.view(FIELDS, -1, D)
        return self.score(fields.mean(0) * user).squeeze(-1)


torch.manual_seed(0)
model = Ranker().eval()
batch = Dim("batch", min=1, max=64)
example = (torch.randn(FIELDS * 8, D), torch.randn(8, D))
ep = torch.export.export(model, example, dynamic_shapes={"packed": {0: FIELDS * batch}, "user": {0: batch}})
served = ep.module()
for b in (4, 1):
    packed, user = torch.randn(FIELDS * b, D), torch.randn(b, D)
    diff = (served(packed, user) - model(packed, user)).abs().max().item()
    print(f"batch {b}: max|served-eager| = {diff:.2e}")
