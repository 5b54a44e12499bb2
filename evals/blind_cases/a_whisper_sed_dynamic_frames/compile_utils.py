"""Shared torch.compile helpers for the audio training scripts."""
import torch


def mark_batch_dynamic(batch, time_dim=-1):
    """Mark the dims that vary between batches as dynamic so the compiled
    graph is reused instead of recompiled for every new shape.

    dim 0 (batch) always varies (last batch of an epoch); for the audio
    inputs (float tensors with a time axis) the time axis varies with the
    clip length.
    """
    for key, value in batch.items():
        if not torch.is_tensor(value):
            continue
        torch._dynamo.mark_dynamic(value, 0)
        if value.is_floating_point() and value.dim() >= 2:
            torch._dynamo.mark_dynamic(value, value.dim() + time_dim if time_dim < 0 else time_dim)
    return batch


def compile_model(model, enabled=True):
    if not enabled:
        return model
    return torch.compile(model)
