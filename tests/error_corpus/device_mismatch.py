# expect: device_mismatch fails_eager_too
import torch


@torch.compile
def project(x, w):
    return x @ w.to("cuda")     # x stays on the CPU (on a CPU-only machine: no driver, same class)


print(project(torch.randn(3, 4), torch.randn(4, 2)))
