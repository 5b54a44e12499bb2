import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(48, 10))

    def forward(self, feats):
        pooled = feats.mean(dim=1)
        return pooled @ self.w


model = torch.compile(Head())
feats = torch.randn(4, 7, 64)
print(model(feats).shape)
