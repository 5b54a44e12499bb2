import math

import torch
import torch.nn as nn
import torch.nn.functional as F

INTENTS = ["billing", "cancel", "upgrade", "tech_support", "shipping", "other"]


class AttnPool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.score = nn.Linear(d, 1)

    def forward(self, h, mask):
        s = self.score(h).squeeze(-1).masked_fill(~mask, -1e4)
        w = s.softmax(-1).unsqueeze(-1)
        return (w * h).sum(1)


class IntentEncoder(nn.Module):
    def __init__(self, vocab=4000, d=64, n_heads=4, max_len=48, n_intents=len(INTENTS)):
        super().__init__()
        self.tok = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(max_len, d)
        self.layer = nn.TransformerEncoderLayer(d, n_heads, dim_feedforward=2 * d, dropout=0.0,
                                                batch_first=True, norm_first=True)
        self.pool = AttnPool(d)
        self.proj = nn.Linear(d, d)
        self.head = nn.Linear(d, n_intents)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(10.0)))

    def forward(self, input_ids, attention_mask):
        mask = attention_mask.bool()
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        h = self.tok(input_ids) + self.pos(pos)
        h = self.layer(h, src_key_padding_mask=~mask)
        z = F.normalize(self.proj(self.pool(h, mask)), dim=-1)
        return self.head(z) * self.logit_scale.exp()


def synthetic_batch(batch, seq=48, vocab=4000, seed=0, shift=0):
    """Keyword-driven synthetic utterances; `shift` changes the label mix like a new week of traffic."""
    g = torch.Generator().manual_seed(seed)
    labels = (torch.randint(0, len(INTENTS), (batch,), generator=g) + shift) % len(INTENTS)
    ids = torch.randint(50, vocab, (batch, seq), generator=g)
    lengths = torch.randint(8, seq + 1, (batch,), generator=g)
    for i in range(batch):
        kw = 1 + labels[i].item() * 7
        ids[i, torch.randint(0, int(lengths[i]), (3,), generator=g)] = kw + torch.arange(3)
        ids[i, lengths[i]:] = 0
    mask = (ids != 0).long()
    return ids, mask, labels
