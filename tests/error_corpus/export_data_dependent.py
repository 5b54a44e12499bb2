# expect: data_dependent_guard export_failure
import torch


class M(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


ep = torch.export.export(M(), (torch.randn(4),))
print(ep)
