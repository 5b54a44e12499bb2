"""Prints a loss from a compiled function whose numbers differ from eager's (a stand-in for a miscompile: a branch
only taken while compiling), then fails reading a missing file, with or without torch.compile. FIXED=1 skips the
file: the run finishes, and its loss is still unlike eager's. (Review of 0.33.183.)"""
import os

import torch

torch.manual_seed(0)
w, x = torch.randn(16, 4), torch.randn(32, 16)


@torch.compile(backend="eager")
def loss_fn(w, x):
    y = (x @ w).tanh()
    if torch.compiler.is_compiling():
        y = y * 1.25
    return (y ** 2).mean()


print(f"loss {loss_fn(w, x).item():.6f}")
if os.environ.get("FIXED") != "1":
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "no_such_calibration.json")) as f:
        f.read()
print("ok")
