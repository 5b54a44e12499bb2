import torch


class Router(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(2))

    def forward(self, x):
        score = x.mean()
        if score.item() > 0:
            return self.experts[0](x)
        return self.experts[1](x)


ep = torch.export.export(Router(), (torch.randn(4, 8),))
print(ep)
