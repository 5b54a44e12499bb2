# expect: shape_mismatch fails_eager_too
import torch

conv = torch.compile(torch.nn.Conv2d(3, 8, 3))
print(conv(torch.randn(1, 4, 8, 8)).shape)
