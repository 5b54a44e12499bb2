# expect: shape_mismatch fails_eager_too
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        return torch.relu(x @ self.w)


print(torch.compile(M())(torch.randn(2, 5)))
