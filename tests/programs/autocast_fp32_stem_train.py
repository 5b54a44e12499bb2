"""A forecaster trained under fp16 autocast whose input stem runs in fp32 (raw readings up to 2.5e5 do not fit
fp16) inside autocast(enabled=False). Compiled, the backward is traced under the outer autocast and the stem's
saved input is cast to fp16: its weight gradient is not finite (blind A/B batch 38: GradScaler skipped every step)."""
import torch
from torch import nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 32)

    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            return self.proj(x.float()) * 1e-4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = Stem()
        self.head = nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.head(self.stem(x))


torch.manual_seed(0)
model = Net()
x = torch.rand(64, 4) * 2.5e5
y = torch.rand(64, 1)
step = torch.compile(model, backend="aot_eager")
with torch.autocast("cpu", dtype=torch.float16):
    loss = ((step(x).float() - y) ** 2).mean()
loss.backward()
g = model.stem.proj.weight.grad
print(f"loss {loss.item():.4f} stem grad finite {bool(torch.isfinite(g).all())}")
