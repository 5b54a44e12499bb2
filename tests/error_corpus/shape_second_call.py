# expect: shape_mismatch fails_eager_too
import torch

lin = torch.nn.Linear(8, 2)
model = torch.compile(lin)
print(model(torch.randn(4, 8)).shape)
print(model(torch.randn(4, 6)).shape)   # a later batch has the wrong feature size
