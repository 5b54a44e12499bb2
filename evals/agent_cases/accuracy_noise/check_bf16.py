import torch
import torch.nn as nn

torch.manual_seed(0)


class Mixer(nn.Module):
    def __init__(self, d=256):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


m = Mixer().to(torch.bfloat16)
x = torch.randn(16, 64, 256, dtype=torch.bfloat16)
ref = m(x)
out = torch.compile(m)(x)
print("max abs diff", (ref - out).abs().max().item())
assert torch.allclose(ref, out, atol=1e-4, rtol=1e-4), "compiled output differs from eager"
