"""A CI parity gate: compiled vs eager scores at rtol = atol = 1e-4. The shared setup lowers float32 matmul
precision ("medium"): on a CPU with bf16 units oneDNN then runs float32 matmuls in bf16, in eager and compiled
alike, and the two round at other places (blind A/B batch 37); on a CPU without them the gate passes."""
import torch
from torch import nn


def setup(seed):
    torch.manual_seed(seed)
    torch.set_float32_matmul_precision("medium")


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Scorer(nn.Module):
    def __init__(self, d=64, depth=4):
        super().__init__()
        self.inp = nn.Linear(16, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(depth)])
        self.out = nn.Linear(d, 32)

    def forward(self, x):
        return self.out(self.blocks(self.inp(x)))


setup(0)
model = Scorer().eval()
x = torch.randn(16, 24, 16)
with torch.no_grad():
    ref = model(x)
    out = torch.compile(model)(x)
print(f"score max |eager-compiled| = {(ref - out).abs().max().item():.3e}")
torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
print("PARITY OK")
