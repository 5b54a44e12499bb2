"""A parity gate for a small beat classifier served in eval mode: the head calls F.dropout without training=, which
stays on under model.eval(); the gate re-seeds before every forward, so eager repeats itself exactly, while the
compiled model's dropout mask (Inductor's RNG) differs and the gate fails (blind A/B batch 43, an ECG scorer).
  --fixed   F.dropout(..., training=self.training)"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class BeatHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.p = nn.Linear(32, 64), nn.Linear(64, 5), 0.2

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if "--fixed" in sys.argv:
            h = F.dropout(h, self.p, training=self.training)
        else:
            h = F.dropout(h, self.p)
        return self.fc2(h)


torch.manual_seed(0)
model = BeatHead().eval()
compiled = torch.compile(model)
x = torch.randn(16, 32)
with torch.no_grad():
    torch.manual_seed(1)
    ref = model(x)
    torch.manual_seed(1)
    got = compiled(x)
diff = (ref - got).abs().max().item()
print(f"max |eager - compiled| = {diff:.3e}")
sys.exit(0 if diff < 1e-4 else 1)
