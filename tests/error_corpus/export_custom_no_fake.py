# expect: custom_op_no_fake export_failure
import torch


@torch.library.custom_op("corpus::export_nofake", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


class M(torch.nn.Module):
    def forward(self, x):
        return double(x) + 1


print(torch.export.export(M(), (torch.randn(3),)))
