"""A custom op (Library.define/impl, as many C++-style extensions register) whose real kernel returns a
view of its input on one branch (blind A/B batch 12, from vllm#44130): eager never checks it; a compiled
graph's first call does, and warns, or raises when the CI environment variable is set (2.15)."""
import torch

lib = torch.library.Library("cdtest", "DEF")
lib.define("first_rows(Tensor x, int n) -> Tensor")


def first_rows(x, n):
    y = x if x.shape[0] % 2 == 0 else torch.cat([x, x[:1]])
    return torch.narrow(y, 0, 0, n)


def first_rows_fake(x, n):
    return x.new_empty((n,) + tuple(x.shape[1:]))


lib.impl("first_rows", first_rows, "CPU")
lib._register_fake("first_rows", first_rows_fake)


@torch.compile(backend="aot_eager")
def head(x):
    return torch.ops.cdtest.first_rows(x * 2, 4) + 1


print("sum", float(head(torch.ones(8, 3)).sum()))
