"""A defect classifier trained under torch.compile(fullgraph=True) that keeps a Grad-CAM heatmap: forward calls
fmap.retain_grad() on its feature map, which Dynamo cannot trace (GB0108, "Tensor.retain_grad() with
AOTDispatcher"), so the first step raises; without torch.compile it trains (blind A/B batch 46). PROBE=1 adds a
zero probe input to the feature map instead and reads probe.grad: one graph, the same heatmap."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

PROBE = bool(os.environ.get("PROBE"))


class DefectNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.stage = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(16, classes)

    def forward(self, x, probe=None):
        fmap = self.stage(self.stem(x))
        if PROBE:
            fmap = fmap + probe
        else:
            fmap.retain_grad()
        self.fmap = fmap
        return self.head(fmap.mean(dim=(2, 3)))


torch.manual_seed(0)
model = DefectNet()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
fwd = torch.compile(model, fullgraph=True, backend="eager")
for step in range(3):
    x, y = torch.randn(4, 1, 16, 16), torch.randint(0, 3, (4,))
    probe = torch.zeros(4, 16, 8, 8, requires_grad=True) if PROBE else None
    loss = F.cross_entropy(fwd(x, probe), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    grad = probe.grad if PROBE else model.fmap.grad
    cam = F.relu((grad.mean(dim=(2, 3), keepdim=True) * model.fmap.detach()).sum(1))
    print(f"step {step}: loss {loss.item():.4f} cam peak {cam[0].argmax().item()}")
