"""Bug: a pattern registered into Inductor's post-grad pattern matcher rewrites x * y as x + y (a user's
replacement with the wrong semantics). Off with torch._inductor.config.pattern_matcher=False."""
import sys

import torch
from torch._inductor.fx_passes.post_grad import pass_patterns
from torch._inductor.pattern_matcher import Arg, CallFunction, register_graph_pattern

aten = torch.ops.aten


@register_graph_pattern(CallFunction(aten.mul.Tensor, Arg(), Arg()), pass_dict=pass_patterns[1])
def _mul_as_add(match, x, y):
    def repl(x, y):
        return x + y
    match.replace_by_example(repl, [x, y])


def f(x, y):
    return (x * y).sin() + y


x, y = torch.randn(16), torch.randn(16)
if not torch.allclose(torch.compile(f)(x, y), f(x, y), atol=1e-4):
    print("MISMATCH", file=sys.stderr)
    sys.exit(1)
print("ok")
