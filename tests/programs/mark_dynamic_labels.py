"""A classifier step compiled with the batch dim of the inputs marked dynamic but not of the labels (blind
A/B batch 15's BERT intent trainer, written fresh): the loss ties the marked dim to the labels' static
size and torch.compile raises ConstraintViolationError. Not an export problem (tests/test_triage.py)."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 5))


def step(x, labels):
    return F.cross_entropy(model(x), labels)


compiled = torch.compile(step)
for n in (16, 16, 8):
    x, labels = torch.randn(n, 32), torch.randint(0, 5, (n,))
    torch._dynamo.mark_dynamic(x, 0)
    if "--mark-labels" in sys.argv:
        torch._dynamo.mark_dynamic(labels, 0)
    loss = compiled(x, labels)
print(f"loss {loss.item():.4f}")
