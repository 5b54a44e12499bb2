"""A CI parity gate that compiles one block class for many configs with fullgraph=True and logs each
config's result, catching errors (blind A/B batch 14's pattern, written fresh): the configs' graphs share
one cache, the ninth hits the recompile limit, and the gate prints FailOnRecompileLimitHit and exits 1
without a traceback. Triage classifies the failure by what the program printed; torch._dynamo.reset()
before each config fixes it (tests/test_triage.py)."""
import sys

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        b, t, d = x.shape
        h = self.proj(x).view(b, t, self.heads, d // self.heads)
        return torch.relu(h).reshape(b, t, d) + x


def check(width, heads):
    torch.manual_seed(0)
    m = Block(width, heads).eval()
    x = torch.randn(2, 4, width)
    with torch.no_grad():
        ref = m(x)
        out = torch.compile(m, fullgraph=True, backend="eager")(x)
    return (out - ref).abs().max().item()


passed = 0
configs = [(32, h) for h in (1, 2, 4, 8, 16, 32)] + [(64, h) for h in (1, 2, 4, 8)]
for width, heads in configs:
    try:
        err = check(width, heads)
        ok = err < 1e-5
        print(f"w{width}-h{heads} {'PASS' if ok else 'FAIL'} err={err:.2e}")
    except Exception as e:
        ok = False
        print(f"w{width}-h{heads} ERROR {type(e).__name__}: {str(e).splitlines()[0]}")
    passed += ok
print(f"{passed}/{len(configs)} configs passed")
sys.exit(0 if passed == len(configs) else 1)
