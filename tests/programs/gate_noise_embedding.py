"""An embedding parity gate (compiled vs eager cosine) on a head whose output is rounding noise: the
per-channel InstanceNorm removes each channel's spatial mean, the mean pool after it then averages to
0 in exact math, and F.normalize scales what rounding left to unit length (blind A/B batch 19)."""
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class Encoder(torch.nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, dim, 3, padding=1)
        self.head_norm = torch.nn.InstanceNorm2d(dim)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        x = self.head_norm(torch.relu(self.conv(x)))
        return F.normalize(self.pool(x).flatten(1), dim=-1)


model = Encoder().eval()
images = torch.randn(16, 3, 24, 24)
with torch.no_grad():
    ref = model(images)
    out = torch.compile(model)(images)
cos = F.cosine_similarity(ref, out, dim=-1)
print(f"cosine min={cos.min():.4f} mean={cos.mean():.4f}")
if cos.min() < 0.999:
    print("PARITY FAIL: compiled embeddings diverge from eager")
    sys.exit(1)
print("PARITY OK")
