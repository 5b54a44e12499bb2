import functools
import logging
import warnings

import torch

log = logging.getLogger(__name__)


def compile_or_eager(fn=None, **compile_kwargs):
    """torch.compile `fn`, but never let a compiler problem kill a training run.

    If the compiled call raises (backend crash, unsupported construct after a
    torch upgrade, ...) we warn and run the original Python function instead.
    """
    if fn is None:
        return functools.partial(compile_or_eager, **compile_kwargs)

    compiled = torch.compile(fn, **compile_kwargs)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return compiled(*args, **kwargs)
        except RuntimeError as e:
            warnings.warn(f"compiled {fn.__qualname__} failed ({e}); running eagerly")
            return fn(*args, **kwargs)

    return wrapper
