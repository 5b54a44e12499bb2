# expect: shape_mismatch fails_eager_too
import torch


@torch.compile(backend="aot_eager")
def attn(q, k):
    return torch.bmm(q, k.transpose(1, 2)).softmax(-1)


print(attn(torch.randn(2, 4, 8), torch.randn(3, 4, 8)))
