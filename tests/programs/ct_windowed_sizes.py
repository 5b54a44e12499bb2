"""Windowed attention blocks that pad the grid to a multiple of the window, as Swin does, run at two image
sizes. After the second size torch recompiles with the sizes symbolic (automatic dynamic), and the padding and
window partitions become floor/mod expressions: the dynamic graph compiles several times slower than the first.
FIXED=1 compiles with dynamic=False (a static graph per size)."""
import os

import torch
import torch.nn.functional as F


class WindowBlock(torch.nn.Module):
    def __init__(self, c, w):
        super().__init__()
        self.w, self.qkv, self.proj = w, torch.nn.Linear(c, 3 * c), torch.nn.Linear(c, c)

    def forward(self, x):
        b, h, wd, c = x.shape
        x = F.pad(x, (0, 0, 0, (self.w - wd % self.w) % self.w, 0, (self.w - h % self.w) % self.w))
        H, W = x.shape[1], x.shape[2]
        win = x.view(b, H // self.w, self.w, W // self.w, self.w, c).permute(0, 1, 3, 2, 4, 5)
        q, k, v = self.qkv(win.reshape(-1, self.w * self.w, c)).chunk(3, -1)
        out = self.proj(F.scaled_dot_product_attention(q, k, v))
        out = out.view(b, H // self.w, W // self.w, self.w, self.w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, H, W, c)
        return out[:, :h, :wd, :].contiguous()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList(WindowBlock(16, w) for w in (3, 4))

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return x.mean()


torch.manual_seed(0)
model = torch.compile(Net(), dynamic=False if os.environ.get("FIXED") == "1" else None)
with torch.no_grad():
    for size in (16, 18):
        print(f"size {size}: {model(torch.randn(2, size, size, 16)).item():.4f}")
