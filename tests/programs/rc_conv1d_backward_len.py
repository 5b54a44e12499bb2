"""A small text CNN trained under torch.compile(dynamic=True) on CPU with batches padded to 32, 64 or 96 tokens: the
program keeps the length symbolic (a max over the time dim), but Inductor's CPU lowering of the Conv1d backward fixes
the grad-input strides as ints, so each length compiles again (blind A/B batch 47). UNFOLD=1 writes the convolution
as pad + unfold + einsum: one graph."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

UNFOLD = bool(os.environ.get("UNFOLD"))


class TextCNN(nn.Module):
    def __init__(self, vocab=100, dim=16, ch=8, k=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.conv = nn.Conv1d(dim, ch, k, padding=1)
        self.head = nn.Linear(ch, 2)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)                      # (B, dim, L)
        if UNFOLD:
            w, b = self.conv.weight, self.conv.bias
            cols = F.pad(x, (1, 1)).unfold(2, w.shape[2], 1)   # (B, dim, L, k)
            h = torch.einsum("bdlk,cdk->bcl", cols, w) + b[None, :, None]
        else:
            h = self.conv(x)
        return self.head(F.relu(h).max(dim=2).values)


torch.manual_seed(0)
model = TextCNN()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model, dynamic=True)
for length in (96, 64, 32, 96):
    ids, y = torch.randint(0, 100, (4, length)), torch.randint(0, 2, (4,))
    loss = F.cross_entropy(step(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"L={length}: loss {loss.item():.4f}")
