"""Count module calls per forward with a global forward hook (a FLOP/profiling counter), for a
compiled transformer-style block. torch.compile(module) adds a wrapper module that the global hook
also sees: one extra call per step, so the count check fails only compiled."""
import torch
import torch.nn as nn
from torch.nn.modules.module import register_module_forward_hook


class Block(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


calls = []
register_module_forward_hook(lambda mod, inp, out: calls.append(type(mod).__name__))
torch.manual_seed(0)
model = Block()
expected = len(list(model.modules())) - 1        # every submodule once (attn's out_proj is not called)
cmodel = torch.compile(model, backend="eager")
for step in range(3):
    calls.clear()
    cmodel(torch.randn(2, 8, 32))
    assert len(calls) == expected, f"step {step}: {len(calls)} module calls counted, expected {expected}: {calls}"
print("module calls per step:", expected)
