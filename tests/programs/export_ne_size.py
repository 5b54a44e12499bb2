"""Review of blind A/B batch 44: a model that takes another path at exactly 100 rows, exported with
Dim("n", min=2, max=200): "Constraints violated (n)! ... satisfy the generated guard L['x'].size()[0] != 100",
no suggested fix. A real restriction inside the range: Dim.DYNAMIC would export with range [2, 200] and
fail at n=100 at run time, so that advice must not be given here."""
import torch
from torch.export import Dim


class Router(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] != 100:
            return x * 2
        return x * 3


ep = torch.export.export(Router(), (torch.randn(8, 4),), dynamic_shapes={"x": {0: Dim("n", min=2, max=200)}})
print("range", [str(v) for v in ep.range_constraints.values()])
