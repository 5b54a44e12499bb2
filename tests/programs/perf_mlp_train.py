"""A small MLP trained compiled: its matmuls stay library calls (mm/addmm, as eager), the GELU, LayerNorm and
their backward are fused kernels Inductor generates; perf counts both (blind A/B batch 40: a matmul-bound step)."""
import torch
m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64), torch.nn.LayerNorm(64))
f = torch.compile(m)
for _ in range(3):
    f(torch.randn(32, 64)).sum().backward()
print("ok")
