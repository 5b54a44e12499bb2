"""Training two Conv1d layers with the time dim marked dynamic (torch._dynamo.mark_dynamic): a lowering
specializes the dim, and mark_dynamic (strict) raises ConstraintViolationError instead of recompiling."""
import torch, torch.nn as nn
m = nn.Sequential(nn.Conv1d(8, 16, 5, padding=2), nn.ReLU(), nn.Conv1d(16, 4, 3, padding=1))
f = torch.compile(m)
for T in (37, 41):
    x = torch.randn(4, 8, T)
    torch._dynamo.mark_dynamic(x, 2)
    f(x).sum().backward()
print("no error")
