# expect: custom_op_no_fake compile_only
import torch


@torch.library.custom_op("corpus::clip_nofake", mutates_args=())
def clip(x: torch.Tensor, lo: float) -> torch.Tensor:
    return x.clamp(min=lo)


class M(torch.nn.Module):
    def forward(self, x):
        return clip(x, 0.0) + 1


print(torch.compile(M())(torch.randn(4)))
