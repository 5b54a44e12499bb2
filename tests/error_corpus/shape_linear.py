# expect: shape_mismatch fails_eager_too
import torch

model = torch.compile(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()))
print(model(torch.randn(2, 5)))
