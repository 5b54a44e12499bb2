# expect: data_dependent_guard export_failure
import torch


class M(torch.nn.Module):
    def forward(self, x, mask):
        n = int(mask.sum())
        return x[:n].reshape(n, -1) * 2


ep = torch.export.export(M(), (torch.randn(6, 2), torch.tensor([1, 1, 0, 1, 0, 0])))
print(ep)
