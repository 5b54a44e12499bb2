"""Real Inductor CPU bug (pytorch#196681, open; fix PR #196882): a 2-D-tiled reduction over a channels_last
input stores a full vector in its tail block, overwriting the next row (wrong values) or the heap (glibc abort).
Vectorized C++ only: with torch._inductor.config.cpp.simdlen = 1 the compiled result matches eager."""
import torch

torch.manual_seed(0)
profiles = torch.randn(4, 100)


def pool(h):
    w = profiles.softmax(-1)[:, None, None, :, None]
    return torch.matmul(torch.nn.functional.gelu(h).unsqueeze(0), w)


compiled = torch.compile(pool)
for step in range(8):   # the overflow does not show on every call: each call is a chance
    h = torch.randn(4, 40, 40, 100).contiguous(memory_format=torch.channels_last)
    diff = (compiled(h) - pool(h)).abs().max().item()
    print(f"call {step}: max abs diff compiled vs eager: {diff:.3g}")
    assert diff < 1e-4, "compiled pooling differs from eager"
