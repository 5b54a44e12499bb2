"""The graph break is in a helper (int(lengths.max())) that forward calls from inside a try/except: Dynamo
inlines the helper, cannot resume inside forward's try, and runs the whole forward eagerly; the helper alone
compiles in pieces. The serving loop that calls the model is not compiled, so its loop is not the block to
name (review of blind A/B batch 21)."""
import torch
import torch.nn as nn


def trim(items, lengths):
    t = int(lengths.max())
    return items[:, :t]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, items, lengths=None):
        try:
            x = trim(items, lengths)
        except AttributeError:
            x = items
        return torch.relu(self.proj(x)).mean(dim=1)


def serve(model, batches):
    outs = []
    for items, lengths in batches:
        outs.append(model(items, lengths))
    return outs


torch.manual_seed(0)
model = torch.compile(Encoder(), backend="eager")
batch = (torch.randn(4, 12, 16), torch.tensor([12, 7, 5, 9]))
outs = serve(model, [batch] * 3)
print("out", tuple(outs[-1].shape), round(outs[-1].sum().item(), 4))
