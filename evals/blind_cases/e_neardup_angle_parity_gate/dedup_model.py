import torch
import torch.nn as nn
import torch.nn.functional as F


class ImageEmbedder(nn.Module):
    """Tiny conv embedder used by the near-duplicate detector (stand-in for the production backbone)."""

    def __init__(self, dim=64):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU())
        self.body = nn.Sequential(
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
            nn.Conv2d(64, 96, 3, stride=2, padding=1), nn.BatchNorm2d(96), nn.ReLU(),
        )
        self.head = nn.Sequential(nn.Linear(96, 128), nn.GELU(), nn.Linear(128, dim))

    def forward(self, x):
        h = self.body(self.stem(x)).mean((2, 3))
        return F.normalize(self.head(h), dim=-1)


def angular_distance(e1, e2):
    """Angle in radians between unit embeddings."""
    cos = (e1 * e2).sum(-1).clamp(-1.0, 1.0)
    return torch.acos(cos)


class NearDupScorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = ImageEmbedder()

    def forward(self, a, b):
        return angular_distance(self.embed(a), self.embed(b))
