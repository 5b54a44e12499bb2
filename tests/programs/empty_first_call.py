"""Nothing compiles: the compiled forward's first call takes an early return (a warm-up / skip flag), so
Dynamo captures an empty graph and runs that function eagerly from then on, also for the calls that
compute (pytorch#144820; 2.9.1-2.15.0)."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x, skip: bool):
        if skip:                     # warm-up call: nothing to do
            return x
        return torch.relu(self.lin(x)) + x


model = torch.compile(Block(), backend="eager")
x = torch.randn(4, 16)
with torch.no_grad():
    model(x, True)
    for _ in range(5):
        y = model(x, False)
print("done", tuple(y.shape))
