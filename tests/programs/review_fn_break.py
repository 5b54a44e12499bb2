"""A clipped-gradient custom op (autograd.Function) whose forward checks its input range in Python."""
import torch, torch.nn as nn

class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        if x.abs().max().item() > 10:    # a range check in Python
            x = x / 10
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= 1)

class Net(nn.Module):
    def __init__(self):
        super().__init__(); self.a = nn.Linear(32, 32); self.b = nn.Linear(32, 32)
    def forward(self, x):
        return self.b(Clip.apply(self.a(x))).relu().sum()

torch.manual_seed(0)
m = Net(); opt = torch.optim.SGD(m.parameters(), lr=0.1)
cm = torch.compile(m)
for i in range(3):
    loss = cm(torch.randn(16, 32)); loss.backward(); opt.step(); opt.zero_grad()
print("loss", loss.item())
