# expect: inference_tensor fails_eager_too
import torch

model = torch.nn.Linear(8, 2)
with torch.inference_mode():
    batch = torch.randn(4, 8)

compiled = torch.compile(model)
loss = compiled(batch).pow(2).mean()
loss.backward()
