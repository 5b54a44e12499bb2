"""Sequence-parallel helpers registered as custom ops so torch.compile treats them as opaque.

Registered through a torch.library.Library fragment (schema + CPU kernel + fake) rather than
the @custom_op decorator to keep per-call dispatch overhead low in the serving path.
"""
import torch
import torch.nn.functional as F

_lib = torch.library.Library("sp", "DEF")


def direct_register_op(name, schema, impl, fake, dispatch_key="CPU"):
    _lib.define(f"{name}{schema}")
    _lib.impl(name, impl, dispatch_key)
    torch.library.register_fake(f"sp::{name}", fake, lib=_lib)


def chunk_tokens_impl(x: torch.Tensor, rank: int, world: int) -> torch.Tensor:
    """Return this rank's contiguous slice of the token dim, padding tokens to a multiple of world."""
    num_tokens = x.size(0)
    remainder = num_tokens % world
    if remainder != 0:
        y = F.pad(x, (0, 0, 0, world - remainder))
    else:
        y = x
    chunk = y.size(0) // world
    return torch.narrow(y, 0, rank * chunk, chunk)


def chunk_tokens_fake(x, rank, world):
    chunk = (x.size(0) + world - 1) // world
    return x.new_empty((chunk, x.size(1)))


def gather_tokens_impl(chunks: list[torch.Tensor], num_tokens: int) -> torch.Tensor:
    """Inverse of chunk_tokens for the single-process emulation: concat the per-rank slices, drop padding."""
    return torch.cat(chunks, dim=0)[:num_tokens].clone()


def gather_tokens_fake(chunks, num_tokens):
    return chunks[0].new_empty((num_tokens, chunks[0].size(1)))


direct_register_op("chunk_tokens", "(Tensor x, int rank, int world) -> Tensor", chunk_tokens_impl, chunk_tokens_fake)
direct_register_op("gather_tokens", "(Tensor[] chunks, SymInt num_tokens) -> Tensor", gather_tokens_impl, gather_tokens_fake)
