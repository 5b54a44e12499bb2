"""A parity gate on a model that standardizes raw barometric windows in float32: torch.std_mean over ~101325 Pa
samples whose spread is ~0.4 Pa. Eager's mean and std are thousands of eps off fp64 already (the offset cancels),
and Inductor's reduction, in another order, lands elsewhere: the gate fails compiled, and torch's accuracy check
finds compiled further from fp64 than eager (blind A/B batch 39: triage said "measured miscompile" and bisect).
  --shift   subtract each window's first sample before the statistics (the fix)"""
import sys

import torch

torch.manual_seed(0)


class Standardize(torch.nn.Module):
    def forward(self, x):
        if "--shift" in sys.argv:
            x = x - x[..., :1]
        std, mean = torch.std_mean(x, dim=-1, keepdim=True)
        return (x - mean) / (std + 1e-6)


model = torch.nn.Sequential(Standardize(), torch.nn.Flatten(), torch.nn.Linear(1200, 16), torch.nn.Tanh(),
                            torch.nn.Linear(16, 3)).eval()
x = (101325.0 + 0.4 * torch.randn(32, 1, 1200, dtype=torch.float64)).float()
with torch.no_grad():
    want = model(x)
    got = torch.compile(model)(x)
diff = (got - want).abs().max().item()
print(f"max|compiled-eager| = {diff:.3e}")
sys.exit(1 if diff > 1e-4 else 0)
