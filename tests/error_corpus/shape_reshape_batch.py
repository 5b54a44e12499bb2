# expect: shape_mismatch fails_eager_too
import torch


class Head(torch.nn.Module):
    def forward(self, x):
        return x.reshape(8, -1, 4)   # hard-coded batch size


m = torch.compile(Head())
print(m(torch.randn(8, 3, 4)).shape)
print(m(torch.randn(5, 3, 4)).shape)
