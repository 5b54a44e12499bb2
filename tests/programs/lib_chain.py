import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import torch  # noqa: E402
from tinylib.layers import Block  # noqa: E402

model = torch.nn.Sequential(Block(4), torch.nn.ReLU())


def step(x):
    return model(x).sum()


f = torch.compile(step, backend="eager")
print(float(f(torch.randn(3, 4))))
