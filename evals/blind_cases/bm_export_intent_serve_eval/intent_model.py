"""Small intent classifier (embedding bag of n-grams -> 1D conv -> MLP head)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 4000
N_INTENTS = 24
MAX_LEN = 32


class ConvIntentClassifier(nn.Module):
    def __init__(self, vocab=VOCAB, dim=96, n_intents=N_INTENTS, p_drop=0.3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, dim, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm1d(dim)
        self.drop = nn.Dropout(p_drop)
        self.head = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU(), nn.Dropout(p_drop), nn.Linear(dim, n_intents))

    def forward(self, token_ids):
        mask = (token_ids != 0).unsqueeze(1).float()           # (B, 1, T)
        x = self.embed(token_ids).transpose(1, 2)              # (B, D, T)
        x = F.gelu(self.norm(self.conv(x))) * mask
        mean = x.sum(-1) / mask.sum(-1).clamp_min(1.0)
        mx = x.masked_fill(mask == 0, -1e4).amax(-1)
        return self.head(self.drop(torch.cat([mean, mx], dim=-1)))


def synthetic_batch(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, N_INTENTS, (n,), generator=g)
    lengths = torch.randint(4, MAX_LEN + 1, (n,), generator=g)
    ids = torch.randint(1, VOCAB, (n, MAX_LEN), generator=g)
    # each intent has a few signature tokens
    ids[:, 0] = 1 + labels * 7
    ids[:, 1] = 2 + labels * 7
    pos = torch.arange(MAX_LEN).unsqueeze(0)
    ids = ids.masked_fill(pos >= lengths.unsqueeze(1), 0)
    return ids, labels
