"""CUDA: a fusible chain compiled with Inductor (Triton kernels)."""
import torch


@torch.compile
def f(x):
    return (x.sin() * 2 + x.cos()).relu()


x = torch.randn(1024, device="cuda")
for _ in range(2):
    f(x)
torch.cuda.synchronize()
