"""A small CNN with an in-place LeakyReLU written as an autograd.Function (setup_context marks the input dirty);
its forward returns `x.mul_(scale)`, which Dynamo does not take as the dirty input itself: GB2464 "mark_dirty
input not returned", one graph break per block (blind A/B batch 46, torch 2.14+). FIXED=1 does the in-place op
and returns x: one graph."""
import os

import torch
import torch.nn as nn


class InplaceLeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(x, slope):
        scale = torch.where(x >= 0, torch.ones_like(x), torch.full_like(x, slope))
        if os.environ.get("FIXED"):
            x.mul_(scale)
            return x
        return x.mul_(scale)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, slope = inputs
        ctx.mark_dirty(x)
        ctx.save_for_backward(output)
        ctx.slope = slope

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * torch.where(out >= 0, torch.ones_like(out), torch.full_like(out, ctx.slope)), None


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return InplaceLeakyReLU.apply(self.bn(self.conv(x)), 0.1)


torch.manual_seed(0)
model = nn.Sequential(Block(8), Block(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)
for i in range(3):
    x, y = torch.randn(4, 8, 16, 16), torch.randint(0, 3, (4,))
    loss = nn.functional.cross_entropy(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {i}: loss {loss.item():.4f}")
