"""Cross-encoder reranker: scores (query, candidate) pairs and returns the top-k candidates."""
import torch
import torch.nn as nn


class CrossEncoder(nn.Module):
    def __init__(self, vocab=8000, dim=128, layers=2, heads=4, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        self.seg = nn.Embedding(2, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, ids, segs):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.tok(ids) + self.pos(pos)[None] + self.seg(segs)
        h = self.enc(h, src_key_padding_mask=ids.eq(0))
        return self.out(self.norm(h[:, 0])).squeeze(-1)


def rank(model, ids, segs, cand_len, opts):
    """ids/segs: (n_candidates, L) packed [CLS] query [SEP] candidate; cand_len: (n_candidates,)"""
    logits = model(ids, segs)
    logits = logits - opts.length_penalty * torch.log1p(cand_len.float())
    probs = torch.softmax(logits / opts.temperature, dim=0)
    probs = torch.where(logits < opts.min_score, torch.zeros_like(probs), probs)
    scores, order = torch.topk(probs, opts.top_k)
    return scores, order
