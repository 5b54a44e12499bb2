import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Encoder(nn.Module):
    def __init__(self, d=64, n=12):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.out = nn.Linear(d, 8)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x.mean(1))


t0 = time.time()
torch.manual_seed(0)
model = Encoder().eval()
model = torch.compile(model)
with torch.no_grad():
    model(torch.randn(2, 16, 64))          # warm-up before serving
print(f"ready to serve after {time.time() - t0:.1f} s")
with torch.no_grad():
    for _ in range(20):
        y = model(torch.randn(2, 16, 64))
print("served", tuple(y.shape))
