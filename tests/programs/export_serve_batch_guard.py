"""A ranking model is exported with one example batch of 8 and no dynamic_shapes, saved, and served in one script:
the serving call with a batch of 3 raises "Guard failed: feats.size()[0] == 8" out of the loaded module's input
guards (ep.module(): the batch dim was made a constant at export; no torch.compile runs). FIXED=1 exports the batch
dim as Dim.AUTO: every batch size is served."""
import io
import os

import torch
import torch.nn as nn


class Ranker(nn.Module):
    def __init__(self, n_feats=12, hidden=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(n_feats, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, feats):
        return self.mlp(feats).squeeze(-1)


def export_to(buf):
    torch.manual_seed(0)
    model = Ranker().eval()
    example = (torch.randn(8, 12),)
    dyn = {"feats": {0: torch.export.Dim.AUTO}} if os.environ.get("FIXED") else None
    ep = torch.export.export(model, example, dynamic_shapes=dyn)
    torch.export.save(ep, buf)
    return model


def serve(buf, model):
    buf.seek(0)
    scorer = torch.export.load(buf).module()
    for batch in (8, 3, 17):
        feats = torch.randn(batch, 12)
        scores = scorer(feats)
        print(f"batch {batch}: top score {scores.max().item():.4f} "
              f"(max|diff| vs model {float((scores - model(feats)).abs().max()):.2e})")


if __name__ == "__main__":
    buf = io.BytesIO()
    serve(buf, export_to(buf))
