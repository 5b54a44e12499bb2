"""Scoring users with a small TransformerEncoder over their item histories, compiled; some users have
no history, so their padding mask hides every position. Eager (eval, no_grad) takes the encoder's
nested-tensor fast path and returns zeros for those rows; compiled runs the dense path, where a softmax
over only -inf gives NaN (tests/test_semantics.py, class transformer_fastpath_padding)."""
import torch
import torch.nn as nn


class Rec(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.emb = nn.Embedding(100, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=4, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1)

    def forward(self, hist):
        pad = hist == 0
        h = self.encoder(self.emb(hist), src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        return (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)


torch.manual_seed(0)
hist = torch.randint(1, 100, (16, 8))
hist[:3] = 0                      # three users with no history yet
with torch.no_grad():
    users = torch.compile(Rec().eval())(hist)
print(f"users with NaN vectors: {torch.isnan(users).any(1).sum().item()}")
