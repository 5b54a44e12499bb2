"""A numpy kernel wrapped as a custom op (custom_op + register_fake), with a numpy backward given to
register_autograd, trained under torch.compile: AOTAutograd traces the backward formula with fake tensors and its
.numpy() raises inside backend 'inductor' (blind A/B batch 39: a piecewise-linear calibration layer; triage's Next
was a bisect). Eager training and compiled inference work.
  --fixed   the numpy backward is a custom op of its own, called from the formula"""
import sys

import torch


@torch.library.custom_op("cdtest::scale_np", mutates_args=())
def scale_np(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(x.numpy() * w.numpy())


@scale_np.register_fake
def _(x, w):
    return torch.empty_like(x)


@torch.library.custom_op("cdtest::scale_np_bwd", mutates_args=())
def scale_np_bwd(g: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    gn, xn, wn = g.numpy(), x.numpy(), w.numpy()
    return torch.from_numpy(gn * wn), torch.from_numpy((gn * xn).sum(0, keepdims=True))


@scale_np_bwd.register_fake
def _(g, x, w):
    return torch.empty_like(x), torch.empty_like(w)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def backward(ctx, g):
    x, w = ctx.saved_tensors
    if "--fixed" in sys.argv:
        return scale_np_bwd(g.contiguous(), x, w)
    gn, xn, wn = g.contiguous().numpy(), x.numpy(), w.numpy()
    return torch.from_numpy(gn * wn), torch.from_numpy((gn * xn).sum(0, keepdims=True))


scale_np.register_autograd(backward, setup_context=setup_context)

torch.manual_seed(0)
lin = torch.nn.Linear(8, 8)
w = torch.nn.Parameter(torch.ones(1, 8))
opt = torch.optim.SGD([*lin.parameters(), w], lr=0.1)


@torch.compile(backend="aot_eager")
def loss_fn(x, y):
    return ((scale_np(lin(x), w) - y) ** 2).mean()


x, y = torch.randn(16, 8), torch.randn(16, 8)
for step in range(3):
    loss = loss_fn(x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
