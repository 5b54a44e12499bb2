"""Weight-only int8 kernels used by the ranking service."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

# Rollout flag: dequantize straight to bf16 to halve the weight bandwidth (INFRA-2231).
_DEQUANT_DTYPE = torch.bfloat16 if os.environ.get("SVC_BF16_DEQUANT", "0") == "1" else torch.float32


@torch.library.custom_op("svc::dequant_rows", mutates_args=())
def dequant_rows(qweight: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    # stand-in for the vectorized C++ kernel: per-output-row symmetric int8 -> float
    return (qweight.to(torch.float32) * scale[:, None]).to(_DEQUANT_DTYPE)


@dequant_rows.register_fake
def _(qweight, scale):
    return qweight.new_empty(qweight.shape, dtype=_DEQUANT_DTYPE)


class QuantLinear(nn.Module):
    def __init__(self, linear: nn.Linear):
        super().__init__()
        w = linear.weight.detach()
        scale = w.abs().amax(dim=1).clamp(min=1e-8) / 127.0
        self.register_buffer("qweight", torch.round(w / scale[:, None]).to(torch.int8))
        self.register_buffer("scale", scale.to(torch.float32))
        self.register_buffer("bias", linear.bias.detach().clone() if linear.bias is not None else None)

    def forward(self, x):
        w = torch.ops.svc.dequant_rows(self.qweight, self.scale)
        return F.linear(x, w.to(x.dtype), self.bias)


def quantize_(module: nn.Module) -> nn.Module:
    for name, child in module.named_children():
        if isinstance(child, nn.Linear) and child.in_features >= 64:
            setattr(module, name, QuantLinear(child))
        else:
            quantize_(child)
    return module
