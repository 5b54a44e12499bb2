import math
import torch
import torch.nn as nn
import torch.nn.functional as F

INTENTS = ["balance", "transfer", "card_lost", "dispute", "loan_info", "fraud_report",
           "address_change", "statement", "pin_reset", "other"]


class HashTokenizer:
    """Word-hash tokenizer (the production one is a sentencepiece model with the same id layout)."""

    def __init__(self, vocab_size=4096, max_len=48):
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.pad_id, self.cls_id = 0, 1

    def encode(self, texts):
        ids = torch.zeros(len(texts), self.max_len, dtype=torch.long)
        mask = torch.zeros(len(texts), self.max_len, dtype=torch.long)
        for i, t in enumerate(texts):
            toks = [self.cls_id] + [2 + (sum(ord(c) * 31 ** k for k, c in enumerate(w)) % (self.vocab_size - 2))
                                    for w in t.lower().split()]
            toks = toks[: self.max_len]
            ids[i, : len(toks)] = torch.tensor(toks)
            mask[i, : len(toks)] = 1
        return ids, mask


class Block(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))

    def forward(self, x, attn_bias):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_bias)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(self.ln2(x))


class IntentRouter(nn.Module):
    def __init__(self, vocab_size=4096, max_len=48, d=128, heads=4, layers=3, ff=512, n_intents=len(INTENTS)):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, max_len, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads, ff) for _ in range(layers)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_intents)
        self.calib_temp = nn.Parameter(torch.ones(1))

    def forward(self, input_ids, attention_mask):
        t = input_ids.shape[1]
        x = self.tok(input_ids) + self.pos[:, :t]
        keep = attention_mask[:, None, None, :].bool()
        bias = torch.zeros(keep.shape, dtype=x.dtype, device=x.device).masked_fill(~keep, -1e4)
        for blk in self.blocks:
            x = blk(x, bias)
        x = self.norm(x)
        m = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp_min(1.0)
        return F.softmax(self.head(pooled) / self.calib_temp, dim=-1)
