"""Activation-memory policy shared by our training scripts.

Save the outputs of the matmuls (expensive to recompute), recompute everything
else (norms, activations, softmax) in backward.
"""
import functools

import torch
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

_SAVE_OPS = {
    torch.ops.aten.mm.default,
    torch.ops.aten.addmm.default,
    torch.ops.aten.bmm.default,
}


def _policy(ctx, op, *args, **kwargs):
    if op in _SAVE_OPS:
        return CheckpointPolicy.MUST_SAVE
    return CheckpointPolicy.PREFER_RECOMPUTE


def make_context_fn():
    return functools.partial(create_selective_checkpoint_contexts, _policy)


def checkpointed(module, *inputs, context_fn=None):
    if context_fn is None:
        return module(*inputs)
    return checkpoint(module, *inputs, use_reentrant=False, context_fn=context_fn)
