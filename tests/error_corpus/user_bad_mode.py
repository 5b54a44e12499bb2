# expect: user_error fails_eager_too
import torch

model = torch.compile(torch.nn.Linear(2, 2), mode="fastest")
print(model(torch.randn(1, 2)))
