"""CUDA: a real illegal memory access from a user Triton kernel (reads far out of bounds)."""
import torch
import triton
import triton.language as tl


@triton.jit
def bad_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    vals = tl.load(src + offs + (1 << 40))   # no mask, 1 TiB past the allocation
    tl.store(dst + offs, vals)


x = torch.randn(128, device="cuda")
y = torch.empty_like(x)
bad_copy[(1,)](x, y, 128, BLOCK=128)
torch.cuda.synchronize()
print(y.sum().item())
