"""Onset-offset regressor with profiler ranges; checks the compiled model against eager on the same seed."""
import torch, torch.nn as nn
from torch.profiler import record_function
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 1))  # (no .eval())

def predict(x):
    with record_function("onset_head"):
        return net(x).squeeze(-1).sigmoid()

x = torch.randn(8, 64)
with torch.no_grad():
    torch.manual_seed(123)
    ref = predict(x)
    torch.manual_seed(123)
    pred = torch.compile(predict)(x)
err = (pred - ref).abs().max().item()
assert err < 1e-4, f"prediction mismatch vs eager: {err:.3e}"
print("ok")
