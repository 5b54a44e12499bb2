import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self, d=64, n=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        for i, b in enumerate(self.blocks):
            x = b(x)
            scale = x.abs().mean().item()        # monitoring a statistic
            if scale > 10:
                x = x / scale
        return self.head(x)


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
cmodel = torch.compile(model)
for step in range(6):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss = nn.functional.cross_entropy(cmodel(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print("final loss", round(loss.item(), 4))
