# expect: export_error export_failure
import torch
from torch.export import Dim


class M(torch.nn.Module):
    def forward(self, x):
        return x.reshape(4, -1) + 1


batch = Dim("batch")
ep = torch.export.export(M(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: batch}})
print(ep)
