"""Int8 weight-only linear kernel used by the quantized intent model."""
import torch


@torch.library.custom_op("w8ops::int8_weight_linear", mutates_args=())
def int8_weight_linear(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, bias: torch.Tensor
) -> torch.Tensor:
    # per-output-channel symmetric dequant, fp32 accumulate
    w = qweight.to(torch.float32) * scales.unsqueeze(1)
    return torch.addmm(bias, x.reshape(-1, x.shape[-1]), w.t()).reshape(*x.shape[:-1], -1)


@int8_weight_linear.register_fake
def _(x, qweight, scales, bias):
    return x.new_empty(*x.shape[:-1], qweight.shape[0])


def quantize_per_channel(weight: torch.Tensor):
    scales = weight.abs().amax(dim=1).clamp(min=1e-8) / 127.0
    q = torch.round(weight / scales.unsqueeze(1)).clamp(-127, 127).to(torch.int8)
    return q, scales
