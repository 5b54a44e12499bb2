# expect: user_error fails_eager_too
import torch

model = torch.nn.Linear(3, 1)


@torch.compile(backend="eager")
def predict(x):
    return model(x).numpy()


print(predict(torch.randn(2, 3)))
