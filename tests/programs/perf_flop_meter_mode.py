"""Training-step benchmark with an MFU meter (blind A/B batch 63's fk, pytorch#164143): the meter wraps each timed
step in FlopCounterMode, a torch dispatch mode, so Dynamo skips the compiled model's frame and the "compiled" steps
run eagerly. Prints how many graphs torch.compile built. FIXED=1 counts FLOPs once before timing."""
import os
import time

import torch
import torch.nn as nn
from torch.utils.flop_counter import FlopCounterMode

torch.manual_seed(0)


def step_fn(model, opt, x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def main():
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10))
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(model, backend=counting)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    flops = None
    if os.environ.get("FIXED"):
        with FlopCounterMode(display=False) as fc:
            step_fn(model, opt, x, y)
        flops = fc.get_total_flops()
    for i in range(3):
        t0 = time.perf_counter()
        if flops is None:
            with FlopCounterMode(display=False) as fc:
                step_fn(compiled, opt, x, y)
            step_flops = fc.get_total_flops()
        else:
            step_fn(compiled, opt, x, y)
            step_flops = flops
        dt = time.perf_counter() - t0
        print(f"step {i}: {step_flops / dt / 1e9:.2f} GFLOP/s")
    print(f"graphs {len(graphs)}")


if __name__ == "__main__":
    main()
