"""A per-step augmentation shift from a 64-bit LCG hash of the step number, computed inside the compiled
function. Steps 0 and 1 match eager; from step 1's recompile `step` is symbolic and Inductor computes the hash
in 64-bit integers, which wrap where Python's int does not: from step 2 the shift differs, silently. The
program's parity check fails only compiled; with automatic_dynamic_shapes=False it passes."""
import sys

import torch

MULT, INC = 6364136223846793005, 1442695040888963407


def step_shift(step, period):
    return ((step * MULT + INC) >> 33) % period


def augment(x, step):
    return torch.roll(x, step_shift(step, x.shape[-1]), dims=-1) * 2


compiled = torch.compile(augment)
x = torch.arange(96, dtype=torch.float32)
bad = 0
for step in range(5):
    a, b = augment(x, step), compiled(x, step)
    same = torch.equal(a, b)
    bad += not same
    print(f"step {step}: shift {step_shift(step, 96)} {'ok' if same else 'DIFFERS'}")
if bad:
    print(f"PARITY FAILED on {bad} step(s)")
    sys.exit(1)
print("parity ok")
