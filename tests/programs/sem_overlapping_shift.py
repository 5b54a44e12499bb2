"""A streaming FIR filter keeps its last taps in a slice of a preallocated buffer and shifts them in place each tick:
`line[:, :, 1:] = line[:, :, :-1]`. The source and destination overlap; eager's copy reads taps it has already
overwritten (the slice is not contiguous, so PyTorch's overlap check stays silent), while AOTAutograd functionalizes
the copy into the intended shift. A CI gate compares the compiled stream with eager and fails: compiled is the
correct side (blind A/B batch 67; pytorch#906). FIXED=1: shift from a clone."""
import os
import sys

import torch

TAPS = 9
torch.manual_seed(0)
weight = torch.randn(3, TAPS)


def step(line, x):
    line[:, :, 1:] = line[:, :, :-1]
    line[:, :, 0] = x
    return (line * weight).sum(-1)


def step_fixed(line, x):
    line[:, :, 1:] = line[:, :, :-1].clone()
    line[:, :, 0] = x
    return (line * weight).sum(-1)


if os.environ.get("FIXED") == "1":
    step = step_fixed
compiled_step = torch.compile(step, backend="aot_eager")
ticks = torch.randn(24, 4, 3)
outs = {}
for name, fn in (("eager", step), ("compiled", compiled_step)):
    buf = torch.zeros(4, 3, TAPS + 3)
    line = buf[:, :, :TAPS]
    outs[name] = torch.stack([fn(line, x) for x in ticks])
diff = (outs["eager"] - outs["compiled"]).abs().max().item()
print(f"max |eager - compiled| = {diff:.3e}")
if diff > 1e-5:
    sys.exit("PARITY GATE FAILED")
print("PARITY GATE PASSED")
