# expect: recompile_error compile_only
import torch


@torch.compile(backend="eager", dynamic=False)
def f(x):
    return x * 2


f(torch.randn(3))
with torch.compiler.set_stance("fail_on_recompile"):
    f(torch.randn(5))
