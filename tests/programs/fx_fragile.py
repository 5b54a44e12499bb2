"""A fix that breaks the program, in a program whose output is random (tests fix's bad-input paths).
capture_dynamic_output_shape_ops removes the nonzero graph break, but then .tolist() on the
data-dependent result fails to compile (GuardOnDataDependentSymNode)."""
import torch


@torch.compile(backend="eager")
def positions(x):
    idx = torch.nonzero(x)
    return idx.view(-1).tolist()


print("positions", positions(torch.tensor([1.0, 0.0, 1.0])))
print("noise", torch.randn(2).tolist())   # no seed: differs on every run
