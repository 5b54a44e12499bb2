# expect: dtype_mismatch fails_eager_too
import torch

model = torch.compile(torch.nn.Linear(4, 2))
print(model(torch.randn(3, 4, dtype=torch.float64)))
