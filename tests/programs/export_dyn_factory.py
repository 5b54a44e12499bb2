"""Factories for `export` that return (model, args, dynamic_shapes): Dim specs are not kwargs."""
import torch
from torch.export import Dim


class Scale(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


def auto_dict():
    return Scale(), (torch.randn(4, 3),), {"x": {0: Dim.AUTO}}


def named_tuple():
    return Scale(), (torch.randn(4, 3),), ({0: Dim("batch", min=2, max=64)},)


def bad_third():
    return Scale(), (torch.randn(4, 3),), ("batch",)
