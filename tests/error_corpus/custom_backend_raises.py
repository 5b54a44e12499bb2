# expect: backend_compiler_failed compile_only
import torch


def my_backend(gm, example_inputs):
    raise NotImplementedError("my_backend cannot lower aten.sin yet")


@torch.compile(backend=my_backend)
def f(x):
    return x.sin() + 1


print(f(torch.randn(3)))
