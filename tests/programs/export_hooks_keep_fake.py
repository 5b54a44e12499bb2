"""Activation ranges recorded by forward hooks that stay attached while torch.export traces the model (blind A/B
batch 52, pytorch#159787): non-strict export runs forward on fake tensors, hooks included, so the list keeps a
FakeTensor and float() on it afterwards raises GuardOnDataDependentSymNode (zuf0) in eager code. FIXED=1: the hooks
are removed before export. READ=json: the thresholds made from them go to json.dumps, which raises TypeError on a
SymFloat (blind A/B batch 59)."""
import json
import os
import torch
from torch import nn

records = []
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
hooks = [m.register_forward_hook(lambda m, i, o: records.append(o.detach().abs().amax())) for m in model]
x = torch.randn(4, 8)
with torch.no_grad():
    model(x)
if os.environ.get("FIXED") == "1":
    for h in hooks:
        h.remove()
ep = torch.export.export(model, (x,))
print(f"exported {len(ep.graph.nodes)} nodes")
if os.environ.get("READ") == "json":
    print(json.dumps({"thresholds": [r.item() * 1.25 for r in records]}))
print(f"absmax {max(float(r) for r in records):.4f}")
