"""A rotation matrix from np.cos/np.sin of a Python float, built with the legacy torch.Tensor(list) constructor,
inside a compiled model (blind A/B batch 40: test-time augmentation of trajectories). Dynamo traces the numpy calls
as torch ops, so the constructor gets 0-d float64 fake tensors and raises "data is not allocated yet". --math:
math.cos/math.sin and torch.tensor, one graph."""
import math
import sys

import numpy as np
import torch


def rotation(theta):
    if "--math" in sys.argv:
        c, s = math.cos(theta), math.sin(theta)
        return torch.tensor([[c, -s], [s, c]])
    c, s = np.cos(theta), np.sin(theta)
    return torch.Tensor([[c, -s], [s, c]])


@torch.compile(backend="eager")
def rotate(points, theta):
    return points @ rotation(theta).T


pts = torch.randn(5, 2)
print(f"rotated norm {rotate(pts, 0.5).norm().item():.4f} (eager {pts.norm().item():.4f})")
