"""A training step through AOTAutograd: joint graph, forward/backward partition, saved
activations; BatchNorm's running-stat update is an input mutation (functionalized), GELU and
LayerNorm are decomposed."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.bn = torch.nn.BatchNorm1d(64)
        self.ln = torch.nn.LayerNorm(64)
        self.fc2 = torch.nn.Linear(64, 8)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.bn(self.fc1(x)))
        h = self.ln(h) * torch.sigmoid(h)
        return self.fc2(h)


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = torch.compile(model)
x, y = torch.randn(16, 32), torch.randn(16, 8)
for _ in range(2):
    loss = torch.nn.functional.mse_loss(step(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
print("loss", float(loss))
