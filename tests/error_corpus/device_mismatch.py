# expect: device_mismatch fails_eager_too
import torch

model = torch.compile(torch.nn.Linear(4, 2).to("cuda"))   # on a CPU-only machine: no driver, same class
print(model(torch.randn(3, 4)))                            # the input stays on the CPU
