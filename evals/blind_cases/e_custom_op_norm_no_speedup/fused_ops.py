"""Kernels shared with the GPU build. On CPU we register the reference implementations
as torch.library custom ops so the model code calls the same op names everywhere."""
import torch


@torch.library.custom_op("embsvc::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    var = x.pow(2).mean(-1, keepdim=True)
    return x * torch.rsqrt(var + eps) * weight


@rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x)


@torch.library.custom_op("embsvc::swiglu", mutates_args=())
def swiglu(gate_up: torch.Tensor) -> torch.Tensor:
    gate, up = gate_up.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up


@swiglu.register_fake
def _(gate_up):
    shape = list(gate_up.shape)
    shape[-1] //= 2
    return gate_up.new_empty(shape)


@torch.library.custom_op("embsvc::rotary", mutates_args=())
def rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    rot = torch.cat([-x2, x1], dim=-1)
    return x * cos + rot * sin


@rotary.register_fake
def _(x, cos, sin):
    return torch.empty_like(x)
