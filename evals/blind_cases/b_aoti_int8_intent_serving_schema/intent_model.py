import torch
import torch.nn as nn
import torch.nn.functional as F

from text_features import INTENTS, PAD_ID, VOCAB_BUCKETS
from w8_kernels import quantize_per_channel


class Int8WeightLinear(nn.Module):
    def __init__(self, linear: nn.Linear):
        super().__init__()
        q, s = quantize_per_channel(linear.weight.detach())
        self.register_buffer("qweight", q)
        self.register_buffer("scales", s)
        bias = linear.bias.detach() if linear.bias is not None else torch.zeros(linear.out_features)
        self.register_buffer("bias", bias.clone())

    def forward(self, x):
        return torch.ops.w8ops.int8_weight_linear(x, self.qweight, self.scales, self.bias)


class IntentClassifier(nn.Module):
    def __init__(self, dim=128, hidden=256):
        super().__init__()
        self.emb = nn.Embedding(VOCAB_BUCKETS, dim, padding_idx=PAD_ID)
        self.ff1 = nn.Linear(dim, hidden)
        self.ff2 = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.cls = nn.Linear(hidden, len(INTENTS))

    def forward(self, token_ids):
        mask = (token_ids != PAD_ID).unsqueeze(-1).to(torch.float32)
        e = self.emb(token_ids)
        pooled = (e * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        h = F.gelu(self.ff1(pooled))
        h = self.norm(h + F.gelu(self.ff2(h)))
        return self.cls(h)


def quantize_(model: nn.Module) -> nn.Module:
    for name, child in list(model.named_children()):
        if isinstance(child, nn.Linear):
            setattr(model, name, Int8WeightLinear(child))
        else:
            quantize_(child)
    return model
