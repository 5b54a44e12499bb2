import torch
import torch.nn as nn


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 100)
        self.top_k = 5

    def forward(self, h):
        logits = self.proj(h)
        vals, idx = torch.topk(logits, self.top_k, dim=-1)
        return torch.softmax(vals, dim=-1), idx


torch.manual_seed(0)
m = Sampler()
f = torch.compile(m)
for i, seq in enumerate([5, 9, 13, 17, 21, 25, 29, 33, 37, 41]):
    m.top_k = [3, 5, 8, 10, 12][i % 5]      # per-request setting
    probs, idx = f(torch.randn(seq, 32))
print("done", probs.shape)
