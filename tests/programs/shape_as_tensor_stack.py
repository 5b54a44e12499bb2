"""Only fails compiled, on a Python value, at a line where Dynamo broke the graph (blind A/B batch 12, from
rf-detr#1411): Dynamo traces torch._shape_as_tensor(x) as x.size(), a torch.Size, so torch.stack of it
raises TypeError; eagerly it is a LongTensor and the program runs."""
import torch


class LevelEmbed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, feats):
        shapes = torch.stack([torch._shape_as_tensor(f)[2:4] for f in feats])
        tokens = torch.cat([f.flatten(2).transpose(1, 2) for f in feats], dim=1)
        return self.proj(tokens).mean() + shapes.float().sum()


m = torch.compile(LevelEmbed(), backend="eager")
feats = [torch.randn(1, 4, 8, 8), torch.randn(1, 4, 4, 4)]
print("loss", round(float(m(feats)), 4))
