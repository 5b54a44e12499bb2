"""A ticket encoder that trims the padded batch to its longest row inside forward: with
capture_scalar_outputs = True (the graph-break hint's setting) the length is a data-dependent size, and Inductor's
bmm lowering cannot decide whether it equals 1 (blind A/B batch 37: GuardOnDataDependentSymNode Eq(u1, 1))."""
import torch
from torch import nn

torch._dynamo.config.capture_scalar_outputs = True


class Encoder(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.emb = nn.Embedding(100, d)
        self.qkv = nn.Linear(d, 3 * d)
        self.heads = heads

    def forward(self, ids, mask):
        longest = int(mask.sum(dim=1).max())
        ids, mask = ids[:, :longest], mask[:, :longest]
        b, n = ids.shape
        q, k, v = self.qkv(self.emb(ids)).view(b, n, 3, self.heads, -1).unbind(2)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).softmax(-1)
        return (att @ v).mean((1, 2))


ids = torch.randint(0, 100, (4, 16))
mask = torch.zeros(4, 16, dtype=torch.long)
mask[:, :10] = 1
model = Encoder().eval()
with torch.no_grad():
    print("eager:", model(ids, mask).sum().item())
    print("compiled:", torch.compile(model)(ids, mask).sum().item())
