"""A training loop whose model records the encoder's activation norm each step for a later report, but
skips it "while compiling" (the author meant to keep fake tensors out). Compiled, is_compiling() is True
when Dynamo traces forward, so the compiled forward never records: the report's check fails only compiled."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.GELU())
        self.head = nn.Linear(32, 4)
        self.norms = []

    def forward(self, x):
        h = self.enc(x)
        if not torch.compiler.is_compiling():
            self.norms.append(h.detach().norm())
        return self.head(h)


torch.manual_seed(0)
model = Net()
step_fn = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    loss = nn.functional.cross_entropy(step_fn(torch.randn(8, 16)), torch.randint(0, 4, (8,)))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"recorded {len(model.norms)} activation norms for 4 steps")
assert len(model.norms) == 4, "activation report is incomplete"
