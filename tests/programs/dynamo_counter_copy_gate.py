"""A class-weighted loss whose weights come from label counts: the compiled forward copies a
collections.Counter with copy.copy (pytorch#195901, open: Dynamo traces the copy of a Counter made outside the
compiled frame as empty), so every weight is 1.0 and the compiled loss differs from eager's. The program's
parity check fails only compiled; the compiled graph itself matches eager on its inputs."""
import collections
import copy
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, counts):
        super().__init__()
        self.fc = nn.Linear(16, 4)
        self.counts = counts

    def weights(self):
        freq = copy.copy(self.counts)
        for k in range(4):
            freq[k] += 1
        w = torch.tensor([1.0 / freq[k] for k in range(4)])
        return w / w.mean()

    def forward(self, x, y):
        return F.cross_entropy(self.fc(x), y, weight=self.weights())


torch.manual_seed(0)
model = Classifier(collections.Counter({0: 400, 1: 100, 2: 20, 3: 5}))
x, y = torch.randn(32, 16), torch.randint(0, 4, (32,))
eager = model(x, y).item()
compiled = torch.compile(model)(x, y).item()
print(f"loss eager {eager:.5f} compiled {compiled:.5f}")
if abs(eager - compiled) > 1e-4:
    print("PARITY CHECK FAILED")
    sys.exit(1)
print("parity ok")
