import math
import torch
from torch.utils.data import Dataset


class SurfaceDefects(Dataset):
    """Synthetic stand-in for the line-scan camera crops (64x64, 3 channels).

    Class 0 is clean surface; classes 1-4 carry a defect pattern (scratch,
    pit cluster, stain, crack) at a random position on top of the background
    texture. The generator is seeded per index so every epoch sees the same
    images.
    """

    CLASSES = ("clean", "scratch", "pits", "stain", "crack")

    def __init__(self, n, size=64, seed=0):
        self.n, self.size, self.seed = n, size, seed

    def __len__(self):
        return self.n

    def _background(self, g):
        s = self.size
        base = torch.rand(3, 1, 1, generator=g) * 0.4 + 0.3
        grain = torch.randn(1, s, s, generator=g) * 0.08
        return base + grain

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(self.seed * 100003 + idx)
        label = idx % len(self.CLASSES)
        img = self._background(g)
        s = self.size
        yy, xx = torch.meshgrid(torch.arange(s), torch.arange(s), indexing="ij")
        cy, cx = torch.randint(12, s - 12, (2,), generator=g).tolist()
        if label == 1:
            ang = torch.rand(1, generator=g).item() * math.pi
            d = (xx - cx) * math.sin(ang) - (yy - cy) * math.cos(ang)
            img = img - 0.35 * (d.abs() < 1.2).float()
        elif label == 2:
            for _ in range(6):
                py, px = (torch.randint(-8, 9, (2,), generator=g) + torch.tensor([cy, cx])).tolist()
                img = img - 0.4 * (((yy - py) ** 2 + (xx - px) ** 2) < 3).float()
        elif label == 3:
            r2 = ((yy - cy) ** 2 + (xx - cx) ** 2).float()
            img = img + torch.tensor([0.25, 0.1, -0.15]).view(3, 1, 1) * torch.exp(-r2 / 60.0)
        elif label == 4:
            walk = torch.cumsum(torch.randint(-1, 2, (s,), generator=g), 0) + cy
            mask = (yy - walk.view(1, s)).abs() <= 0
            img = img - 0.45 * mask.float()
        img = img.clamp(0, 1)
        return (img - 0.5) / 0.25, label
