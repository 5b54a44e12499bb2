"""Post-hoc temperature scaling of a small padded-sequence classifier (blind A/B batch 52, pytorch#132362): forward
reads the temperature with `try: self.calibration["temperature"] except KeyError: return logits`. The eval graph is
compiled while the dict is empty; Dynamo guards that calibration is a dict, not that the key is absent, so after
the key is set the old graph keeps returning unscaled logits (compiled "after" == "before"; eager changes).
The encoder is an nn.TransformerEncoder with a padding mask in eval (its fast path differs from the compiled dense
path only at padded positions, which the masked mean ignores). FIXED=1: dict.get (guarded); --no-compile: eager."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FIXED = os.environ.get("FIXED") == "1"


class Classifier(nn.Module):
    def __init__(self, vocab=50, d=16, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(d, classes)
        self.calibration = {}

    def forward(self, ids):
        pad = ids == 0
        h = self.encoder(self.emb(ids), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        logits = self.head((h * keep).sum(1) / keep.sum(1))
        if FIXED:
            t = self.calibration.get("temperature")
            return logits if t is None else logits / t
        try:
            t = self.calibration["temperature"]
        except KeyError:
            return logits
        return logits / t


torch.manual_seed(0)
model = Classifier().eval()
ids = torch.randint(1, 50, (8, 12))
ids[::2, 8:] = 0
labels = torch.randint(0, 3, (8,))
run = model if "--no-compile" in sys.argv else torch.compile(model, backend="eager")
with torch.no_grad():
    print(f"before nll {F.cross_entropy(run(ids), labels).item():.4f}")
    model.calibration["temperature"] = 2.5
    print(f"after  nll {F.cross_entropy(run(ids), labels).item():.4f}")
