"""Serving-side wrapper shared by the online scorer and the nightly gate."""
import logging

import torch

log = logging.getLogger("serving")


class StaticBatchRunner:
    """Runs a compiled model at one fixed batch size.

    Requests are padded up to `max_batch` so the compiled graph always sees the same shapes
    (no recompiles for the ragged tail of a request stream), and outputs are cut back.
    """

    def __init__(self, model, max_batch, **compile_kwargs):
        self.max_batch = max_batch
        self.fn = torch.compile(model, dynamic=False, **compile_kwargs)

    def _pad(self, t):
        n = t.shape[0]
        if n == self.max_batch:
            return t
        if n > self.max_batch:
            raise ValueError(f"batch {n} exceeds max_batch {self.max_batch}")
        # repeat the last row so the padded rows are valid inputs
        return torch.cat([t, t[-1:].expand(self.max_batch - n, *t.shape[1:])], dim=0)

    def __call__(self, *inputs):
        n = inputs[0].shape[0]
        out = self.fn(*(self._pad(x) for x in inputs))
        return out[:n, :n] if out.dim() == 2 and out.shape[1] == self.max_batch else out[:n]
