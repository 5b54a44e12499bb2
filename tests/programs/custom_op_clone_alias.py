"""A forecaster's in-place differencing custom op (mutates dst, reads src) called as `raw = x.clone(); op(raw, x)`
in a training forward: in the graph that needs gradients Inductor drops the clone and writes x in place, so the op
reads values it has already overwritten (pytorch#198031, open; blind A/B batch 49). The program prints the loss of
one step; eager and compiled differ. FIXED=1 gives the op an output of its own (torch.empty_like)."""
import os

import torch
import torch.nn as nn


@torch.library.custom_op("demo::lag_diff_", mutates_args=("dst",))
def lag_diff_(src: torch.Tensor, dst: torch.Tensor) -> None:
    for t in range(1, src.shape[1]):          # front to back, as the production kernel does
        dst[:, t] = src[:, t] - src[:, t - 1]
    dst[:, 0] = 0.0


@lag_diff_.register_fake
def _(src, dst):
    return None


class Forecaster(nn.Module):
    def __init__(self, steps=16):
        super().__init__()
        self.inp = nn.Linear(steps, steps)
        self.out = nn.Linear(steps, 1)

    def forward(self, window):
        x = self.inp(window)
        if os.environ.get("FIXED"):
            out = torch.empty_like(x)
            lag_diff_(x, out)
            x = out
        else:
            raw = x.clone()
            lag_diff_(raw, x)
        return self.out(torch.relu(x)).squeeze(-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Forecaster()
    window, target = torch.randn(32, 16), torch.randn(32)
    step = torch.compile(model)
    loss = nn.functional.mse_loss(step(window), target)
    loss.backward()
    print(f"loss {loss.item():.6f}")
