"""A fused scale-and-add op written as a torch.library.triton_op, with a CPU implementation registered through
register_kernel("cpu") for machines without a GPU. Eager on CPU uses that implementation; torch.compile traces the
op's body, whose Triton kernel then sits in a graph of CPU tensors (blind A/B batch 37: a SchNet-style
energy model's cfconv op)."""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * alpha + y, mask=mask)


@triton_op("cdtest::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(_scale_add_kernel)[(triton.cdiv(n, 128),)](x, y, out, alpha, n, BLOCK=128)
    return out


@scale_add.register_kernel("cpu")
def _(x, y, alpha):
    return x * alpha + y


class Mixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)

    def forward(self, x):
        h = self.lin(x)
        return scale_add(h, x, 0.5).relu()


model = Mixer().eval()
x = torch.randn(8, 32)
with torch.no_grad():
    print("eager:", model(x).sum().item())
    print("compiled:", torch.compile(model)(x).sum().item())
