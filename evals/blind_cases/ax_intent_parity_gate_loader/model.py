import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self, dim, kernel):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.dw = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.pw2 = nn.Linear(4 * dim, dim)

    def forward(self, x, mask):
        h = self.norm(x) * mask[..., None]
        h = self.dw(h.transpose(1, 2)).transpose(1, 2)
        h = self.pw2(F.gelu(self.pw1(h)))
        return x + h


class IntentClassifier(nn.Module):
    def __init__(self, vocab, n_intents, dim=128, depth=4, kernel=5, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(max_len, dim) / math.sqrt(dim))
        self.blocks = nn.ModuleList([ConvBlock(dim, kernel) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, n_intents)

    def forward(self, input_ids, attention_mask):
        m = attention_mask.to(self.pos.dtype)
        x = self.embed(input_ids) + self.pos[: input_ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, m)
        x = self.norm(x)
        pooled = (x * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp_min(1.0)
        return self.head(pooled)
