"""An encoder whose forward carries @torch.inference_mode() and slices a position buffer, compiled (blind A/B batch 53,
pytorch#169477): AOTAutograd fails with "Cannot set version_counter for inference tensor". FIXED=1: inference mode is
entered around the compiled call instead."""
import os

import torch
from torch import nn

FIXED = os.environ.get("FIXED") == "1"


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("position_ids", torch.arange(64).unsqueeze(0))
        self.pos = nn.Embedding(64, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return self.proj(x + self.pos(self.position_ids[:, : x.shape[1]]))


if not FIXED:
    Encoder.forward = torch.inference_mode()(Encoder.forward)
model = torch.compile(Encoder().eval())
x = torch.randn(2, 10, 16)
with torch.inference_mode() if FIXED else torch.no_grad():
    out = model(x)
print(f"out {tuple(out.shape)}")
