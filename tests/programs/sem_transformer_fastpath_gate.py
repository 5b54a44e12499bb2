"""A CI parity gate for a token tagger (TransformerEncoder, eval, no_grad): every sequence has real
tokens, the tail of each is padding. Eager's fast path returns zeros at padded positions, compiled
computes them (torch 2.14+), so the whole-tensor assert_close fails while every real token matches
(tests/test_semantics.py, class transformer_fastpath_padding)."""
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab=500, d=64, n_tags=9):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d, n_tags)

    def forward(self, ids):
        pad = ids.eq(0)
        h = self.enc(self.emb(ids), src_key_padding_mask=pad)
        return self.head(h)


torch.manual_seed(0)
model = Tagger().eval()
ids = torch.randint(1, 500, (8, 32))
for i in range(8):
    ids[i, 20 + i:] = 0
with torch.no_grad():
    ref = model(ids)
    out = torch.compile(model, backend="eager")(ids)
print(f"max abs diff {(ref - out).abs().max().item():.3g}")
torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
print("parity gate passed")
