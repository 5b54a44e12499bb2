"""A torch.library custom op (Python kernel and fake kernel) used by aoti_custom_op_serve.py."""
import torch


@torch.library.custom_op("cdtest::scaled_relu", mutates_args=())
def scaled_relu(x: torch.Tensor, s: float) -> torch.Tensor:
    return torch.relu(x) * s


@scaled_relu.register_fake
def _(x, s):
    return torch.empty_like(x)
