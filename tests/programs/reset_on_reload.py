"""A scoring server that reloads its checkpoint every 5 requests and calls torch._dynamo.reset() before compiling
the new model (blind A/B batch 26): each reload compiles forward from scratch (compile id 0/0 again; not a
recompile) and the first request after it is slow. INPLACE=1 compiles once and loads new weights in place."""
import os
import time

import torch
import torch.nn as nn

torch.manual_seed(0)


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


base, compiled = Scorer().eval(), None
for req in range(15):
    if req % 5 == 0:
        state = {k: v + 0.01 * req for k, v in base.state_dict().items()}   # a new checkpoint
        if os.environ.get("INPLACE") == "1" and compiled is not None:
            with torch.no_grad():
                model.load_state_dict(state)
        else:
            torch._dynamo.reset()
            model = Scorer().eval()
            model.load_state_dict(state)
            compiled = torch.compile(model, backend="eager")
    t0 = time.perf_counter()
    with torch.no_grad():
        score = compiled(torch.randn(8, 16)).mean().item()
    ms = (time.perf_counter() - t0) * 1000
    if req % 5 == 0:
        print(f"req {req}: {ms:.0f} ms (score {score:.3f})")
