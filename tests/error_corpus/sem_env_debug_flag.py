# expect: env_read_while_tracing compile_only
import os

import torch


class Scaler(torch.nn.Module):
    def forward(self, x):
        if os.getenv("SCALER_DISABLE") == "1":      # a debug switch read at every call
            return x
        return x * 2.0


m = torch.compile(Scaler(), backend="eager")
x = torch.ones(3)
m(x)
os.environ["SCALER_DISABLE"] = "1"
out = m(x)
assert torch.equal(out, x), f"SCALER_DISABLE=1 ignored: {out.tolist()}"
