"""A loss whose label smoothing follows a schedule (label_smoothing=0.3 * r, a Python float, r also used in tensor
math): each new r recompiles with the float baked in, and from the third value on the recompile gets the FX
graph / AOTAutograd cache entry of an earlier one (pytorch#197889, open on 2.15.0): loss and gradients differ
from eager, silently. With TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 every value matches."""
import torch
import torch.nn.functional as F
torch.manual_seed(0)
w = torch.randn(16, 5, requires_grad=True)
x = torch.randn(32, 16)
y = torch.randint(0, 5, (32,))

def step(w, r):
    logits = x @ w
    return F.cross_entropy(logits, y, label_smoothing=0.3 * r) + 0.01 * r * logits.pow(2).mean()

cstep = torch.compile(step)
bad = 0
for i in range(6):
    r = 1.0 - i / 10
    a = step(w, r); ga, = torch.autograd.grad(a, w)
    b = cstep(w, r); gb, = torch.autograd.grad(b, w)
    ok = torch.allclose(a, b, atol=1e-5) and torch.allclose(ga, gb, atol=1e-5)
    bad += not ok
    print(f"r={r:.1f} loss eager {a.item():.5f} compiled {b.item():.5f} {'ok' if ok else 'DIFFERS'}")
print("bad", bad)
