"""An eval loop over a small conv net without torch.no_grad(): relu followed by an in-place clamp_
(a hand-written relu6). Eager never runs backward, so it passes; compiled, AOTAutograd traces the
backward at the first call and fails (triage row inplace_saved_at_compile)."""
import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        out = F.relu(self.bn(self.conv(x)))
        out.clamp_(max=6.0)
        return x + out


model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), Block(8), Block(8),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4)).eval()
runner = torch.compile(model, backend="aot_eager")
correct = 0
for step in range(3):
    x = torch.randn(16, 3, 16, 16)
    correct += (runner(x).argmax(1) == 0).sum().item()
print(f"eval done: {correct} predicted class 0")
