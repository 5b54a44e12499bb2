"""An ablation helper: replaces Block.forward on the class while the context is open."""
import contextlib


@contextlib.contextmanager
def skip_mlp(block_cls):
    original = block_cls.forward

    def forward(self, x):
        return x                      # the block does nothing: its contribution is ablated

    block_cls.forward = forward
    try:
        yield
    finally:
        block_cls.forward = original
