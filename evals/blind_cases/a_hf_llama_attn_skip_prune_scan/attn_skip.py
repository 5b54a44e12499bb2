"""Temporarily drop the attention sub-block of chosen decoder layers.

Used by the pruning scan: a skipped layer keeps its residual stream and MLP,
only the self-attention contribution is removed.
"""
import contextlib

import torch
from transformers.models.llama import modeling_llama


@contextlib.contextmanager
def skip_attention(layer_ids):
    layer_ids = frozenset(layer_ids)
    original_forward = modeling_llama.LlamaAttention.forward

    def forward(self, hidden_states, *args, **kwargs):
        attn_output, attn_weights = original_forward(self, hidden_states, *args, **kwargs)
        if self.layer_idx in layer_ids:
            attn_output = torch.zeros_like(attn_output)
        return attn_output, attn_weights

    modeling_llama.LlamaAttention.forward = forward
    try:
        yield
    finally:
        modeling_llama.LlamaAttention.forward = original_forward
