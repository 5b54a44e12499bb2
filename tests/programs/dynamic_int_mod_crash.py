"""A loss weight on a cycle of training steps, computed from the step number inside the compiled step. The
first call compiles with step == 0; step 1 recompiles with `step` symbolic (automatic dynamic), and
`(step % 50) / 50` under math.cos hits an AOTAutograd pass with no python_mod handler (pytorch#197716, open
on 2.15.0): BackendCompilerFailed at step 1. With automatic_dynamic_shapes=False it runs."""
import math

import torch


def aux_weight(step, cycle=50):
    return 0.5 * (1 - math.cos(2 * math.pi * (step % cycle) / cycle))


@torch.compile
def train_step(x, step):
    return x.sin().sum() * aux_weight(step)


x = torch.randn(64)
for step in range(3):
    print(f"step {step} loss {train_step(x, step).item():.4f}")
