"""An attention block whose custom softmax (autograd.Function) saves its output for backward, followed by
nn.Dropout(inplace=True) on that output: eager raises autograd's in-place error at backward, the compiled
step runs the dropout functionalized and raises nothing (blind A/B batch 22). Dropout is also a random op,
so the compiled run suggests compiled_rng; the eager failure must come first."""
import sys

import torch
import torch.nn as nn


class Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, dim=-1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-1, keepdim=True))


class Block(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.qk = nn.Linear(d, 2 * d)
        self.drop = nn.Dropout(0.1, inplace=True)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        p = self.drop(Softmax.apply(q @ k.transpose(-1, -2)))
        return (p @ x).sum()


torch.manual_seed(0)
model = Block()
step = model if "--no-compile" in sys.argv else torch.compile(model)
x = torch.randn(2, 8, 16)
for i in range(2):
    loss = step(x)
    loss.backward()
    print(f"step {i} loss {loss.item():.4f}")
