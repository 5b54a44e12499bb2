# expect: user_error fails_eager_too
import torch

model = torch.compile(torch.nn.Linear(2, 2), backend="eager")
model(torch.randn(1, 2))
state = torch.load("checkpoint_that_does_not_exist.pt")
