"""Chunk pooling op used by the document-embedding service.

Long documents are split into fixed-size token chunks and every chunk gets its own
mean-pooled vector (the retrieval index stores one vector per chunk).  The kernel is
registered as a torch.library custom op so torch.compile treats it as a single
opaque node (the production build swaps in the C++ kernel from our extension).
"""
import math

import torch


@torch.library.custom_op("docsvc::chunk_mean_pool", mutates_args=())
def chunk_mean_pool(hidden: torch.Tensor, mask: torch.Tensor, chunk: int) -> torch.Tensor:
    # hidden: [T, D], mask: [T] (1 = real token)
    T, D = hidden.shape
    n_chunks = int(math.ceil(T / chunk))
    pad = n_chunks * chunk - T
    h = torch.nn.functional.pad(hidden * mask[:, None], (0, 0, 0, pad))
    m = torch.nn.functional.pad(mask, (0, pad))
    h = h.view(n_chunks, chunk, D).sum(1)
    cnt = m.view(n_chunks, chunk).sum(1).clamp_min(1.0)
    return h / cnt[:, None]


@chunk_mean_pool.register_fake
def _chunk_mean_pool_fake(hidden, mask, chunk):
    T, D = hidden.shape
    n_chunks = int(math.ceil(T / chunk))
    return hidden.new_empty(n_chunks, D)
