"""Export of an intent model whose input is a registered dataclass (tensors and a channel string), with the
dynamic_shapes spec written as a dict keyed by the dataclass's field names (blind A/B batch 37)."""
from dataclasses import dataclass

import torch


@dataclass
class Batch:
    ids: torch.Tensor
    mask: torch.Tensor
    channel: str = "email"


torch.export.register_dataclass(Batch, serialized_type_name="intent.Batch")


class Intent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, batch: Batch):
        h = self.emb(batch.ids) * batch.mask.unsqueeze(-1)
        return self.head(h.sum(1) / batch.mask.sum(1, keepdim=True).clamp_min(1))


b, n = torch.export.Dim("b", min=1, max=64), torch.export.Dim("n", min=4, max=128)
example = Batch(torch.randint(0, 100, (8, 16)), torch.ones(8, 16))
spec = {"batch": {"ids": {0: b, 1: n}, "mask": {0: b, 1: n}}}
ep = torch.export.export(Intent().eval(), (example,), dynamic_shapes=spec)
print(ep.range_constraints)
