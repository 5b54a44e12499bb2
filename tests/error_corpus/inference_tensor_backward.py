# expect: inference_tensor fails_eager_too
import torch

with torch.inference_mode():
    feats = torch.randn(4, 8)        # made under inference_mode

w = torch.randn(8, 2, requires_grad=True)


@torch.compile(backend="aot_eager")
def step(x, w):
    return (x @ w).sin().sum()


step(feats, w).backward()
