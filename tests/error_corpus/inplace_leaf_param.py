# expect: inplace_leaf fails_eager_too
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.scale.mul_(0.9)
        return x * self.scale


print(torch.compile(M(), backend="aot_eager")(torch.randn(3)))
