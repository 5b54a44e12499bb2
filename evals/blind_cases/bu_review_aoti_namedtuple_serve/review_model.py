"""Review scorer: sentiment (3-way) + per-aspect mention probabilities for product reviews."""
from typing import NamedTuple

import torch
import torch.nn as nn

ASPECTS = ["price", "quality", "shipping", "support", "packaging", "size"]
SENTIMENT = ["negative", "neutral", "positive"]


class ReviewScores(NamedTuple):
    sentiment_logits: torch.Tensor   # [B, 3]
    aspect_probs: torch.Tensor       # [B, len(ASPECTS)]
    embedding: torch.Tensor          # [B, dim], used by the dedup service


class ReviewScorer(nn.Module):
    def __init__(self, vocab_size=8000, dim=128, heads=4, layers=2, max_len=96):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.sentiment = nn.Linear(dim, len(SENTIMENT))
        self.aspects = nn.Linear(dim, len(ASPECTS))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> ReviewScores:
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        h = self.tok(input_ids) + self.pos(pos)[None]
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = self.norm((h * m).sum(1) / m.sum(1).clamp_min(1.0))
        return ReviewScores(
            sentiment_logits=self.sentiment(pooled),
            aspect_probs=torch.sigmoid(self.aspects(pooled)),
            embedding=nn.functional.normalize(pooled, dim=-1),
        )


def hash_tokenize(texts, vocab_size=8000, max_len=96):
    """Cheap deterministic tokenizer used by both the packaging job and the server."""
    ids = torch.zeros(len(texts), max_len, dtype=torch.long)
    mask = torch.zeros(len(texts), max_len, dtype=torch.long)
    for i, t in enumerate(texts):
        toks = t.lower().replace(",", " ").replace(".", " ").split()[:max_len]
        for j, w in enumerate(toks):
            ids[i, j] = 1 + (sum(ord(c) * 31 ** k for k, c in enumerate(w)) % (vocab_size - 1))
            mask[i, j] = 1
    return ids, mask
