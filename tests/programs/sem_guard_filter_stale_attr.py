"""A masked-patch encoder reads its mask ratio from a module attribute that a curriculum changes, and the model is
compiled with a guard filter that drops the guards on module attributes: the graph built for the first ratio keeps
running after it changes (blind A/B batch 22). The parity gate fails only compiled."""
import sys

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask_ratio = 0.25
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        keep = int(x.shape[1] * (1 - self.mask_ratio))
        return self.proj(x[:, :keep]).pow(2).mean()


torch.manual_seed(0)
model = Encoder()
compiled = torch.compile(model, options={"guard_filter_fn": torch.compiler.skip_guard_on_all_nn_modules_unsafe})
x = torch.randn(4, 16, 8)
ok = True
for epoch, ratio in enumerate([0.25, 0.25, 0.5]):
    model.mask_ratio = ratio
    a, b = model(x).item(), compiled(x).item()
    same = abs(a - b) <= 1e-3 * abs(a)
    ok &= same
    print(f"epoch {epoch} ratio {ratio} eager {a:.6f} compiled {b:.6f} {'ok' if same else 'MISMATCH'}")
print("PASS" if ok else "FAIL: compiled diverged from eager")
sys.exit(0 if ok else 1)
