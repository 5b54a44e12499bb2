# expect: user_error fails_eager_too
import torch

model = torch.compile(torch.nn.Linear(3, 3))
print(model(torch.randn(2, 3), torch.randn(2, 3)))
