# expect: user_error fails_eager_too
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.linear(x)


print(torch.compile(M())(torch.randn(2, 3)))
