"""A siamese similarity scorer for product photos: two images in, one match score out. The release step
exports it with torch.export for the serving runtime and gates the exported program against the eager
model on a held-out set of pairs. The example inputs for the export come from a helper that builds one
probe batch."""
import os
import sys

import torch
import torch.nn as nn
from torch.export import Dim

torch.manual_seed(0)
SIDE = 24


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.body(x)


class PairScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = Tower()
        self.head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, query, candidate):
        a, b = self.tower(query), self.tower(candidate)
        return self.head(torch.cat([(a - b).abs(), a * b], dim=-1)).squeeze(-1)


def example_inputs(batch=4):
    probe = torch.rand(batch, 3, SIDE, SIDE)
    return {"query": probe, "candidate": probe}


def export_for_serving(model):
    kwargs = example_inputs()
    batch = Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (), kwargs, dynamic_shapes={"query": {0: batch}, "candidate": {0: batch}})
    return ep.module()


def main():
    model = PairScorer().eval()
    served = export_for_serving(model)
    q, c = torch.rand(16, 3, SIDE, SIDE), torch.rand(16, 3, SIDE, SIDE)
    with torch.no_grad():
        ref, got = model(query=q, candidate=c), served(query=q, candidate=c)
    diff = (ref - got).abs().max().item()
    print(f"held-out pairs: {q.shape[0]}  max|eager - exported| = {diff:.3e}")
    if diff > 1e-4:
        print(f"GATE FAIL: exported program differs from eager by {diff:.3e}")
        sys.exit(1)
    print("gate passed")


if __name__ == "__main__":
    main()
