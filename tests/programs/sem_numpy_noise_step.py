"""A noise-robustness sweep: each run seeds NumPy with its own seed and the compiled train step adds
np.random jitter to the batch. Eagerly every seed trains on other noise; compiled, the np.random calls
are traced into torch's generator, so np.random.seed changes nothing. FIXED=1 draws the jitter outside."""
import os
import sys

import numpy as np
import torch

FIXED = os.environ.get("FIXED") == "1"
torch.manual_seed(0)
x, y = torch.randn(64, 8), torch.randn(64, 1)


def step(model, opt, xb, noise=None):
    if noise is None:
        noise = torch.from_numpy(np.random.normal(0.0, 0.3, size=tuple(xb.shape)).astype(np.float32))
    loss = torch.nn.functional.mse_loss(model(xb + noise), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


compiled = "--no-compile" not in sys.argv
for seed in (0, 1):
    np.random.seed(seed)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fwd = torch.compile(model) if compiled else model
    for _ in range(5):
        noise = torch.from_numpy(np.random.normal(0.0, 0.3, size=(64, 8)).astype(np.float32)) if FIXED else None
        if FIXED:
            loss = step(fwd, opt, x, noise)
        else:
            loss = (torch.compile(step) if compiled else step)(model, opt, x)
    print(f"seed {seed}: loss {loss.item():.3f}")
