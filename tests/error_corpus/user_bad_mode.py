# expect: user_error before_compile
import torch

model = torch.compile(torch.nn.Linear(2, 2), mode="fastest")
print(model(torch.randn(1, 2)))
