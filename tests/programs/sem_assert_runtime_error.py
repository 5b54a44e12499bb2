"""A scoring service whose model checks its input with asserts in forward; the handler maps AssertionError to a
client error (422) and anything else to a server error (500). Compiled, the assert on the tensor's values is
torch._assert_async in the graph and a bad payload raises RuntimeError: a 500 (blind A/B batch 66; pytorch#147282).
FIXED=1: validate before the compiled call with an exception type of the program's own."""
import os
import sys

import torch
import torch.nn as nn


class InvalidPayload(ValueError):
    pass


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        if os.environ.get("FIXED") != "1":
            assert torch.isfinite(x).all(), "non-finite telemetry"
        return self.net(x).squeeze(-1)


def validate(x):
    if not torch.isfinite(x).all():
        raise InvalidPayload("non-finite telemetry")


torch.manual_seed(0)
model = Scorer().eval()
# (backend="eager": Dynamo's rewrite of the assert is the whole story; every backend raises the same)
scorer = torch.compile(model, backend="eager")
stats = {"ok": 0, "rejected": 0, "error": 0}
good = [torch.randn(4, 6) for _ in range(3)]
bad = torch.randn(4, 6)
bad[1, 2] = float("nan")
for x in good[:2] + [bad] + good[2:]:
    try:
        if os.environ.get("FIXED") == "1":
            validate(x)
        with torch.no_grad():
            scorer(x)
        stats["ok"] += 1
    except (AssertionError, InvalidPayload):
        stats["rejected"] += 1      # 422
    except Exception as e:  # noqa: BLE001
        print(f"500: {type(e).__name__}: {str(e).splitlines()[0]}")
        stats["error"] += 1
print(stats)
if stats["error"]:
    sys.exit("smoke test failed: a bad payload got a server error")
