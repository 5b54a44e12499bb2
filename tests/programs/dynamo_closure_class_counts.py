"""Per-layer call counts kept by a small class defined inside a factory, whose method updates a dict it
closes over; a new instance is made inside each compiled forward. Dynamo drops that dict update (an open
bug, pytorch#197896, on 2.15.0): compiled, every count stays 0 and the program's check fails; eager passes.
Tensors are unaffected."""
import torch
import torch.nn as nn


def make_tap(counts):
    class Tap:
        def __init__(self, name):
            self.name = name

        def __call__(self, x):
            counts[self.name] = counts.get(self.name, 0) + 1
            return x
    return Tap


counts = {}
Tap = make_tap(counts)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 2)

    def forward(self, x):
        return self.b(Tap("a")(torch.relu(self.a(x))))


torch.manual_seed(0)
model = torch.compile(Net())
for _ in range(3):
    model(torch.randn(4, 8)).sum().backward()
print(f"layer a called {counts.get('a', 0)} times")
if counts.get("a", 0) != 3:
    raise SystemExit("call counts are wrong")
