"""GPU: a matmul model compiled with mode="max-autotune" (Triton compile and autotuning phases appear)."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda().half()
compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
with torch.no_grad():
    for _ in range(2):
        out = compiled(torch.randn(64, 256, device="cuda", dtype=torch.half))
torch.cuda.synchronize()
print("out", tuple(out.shape))
