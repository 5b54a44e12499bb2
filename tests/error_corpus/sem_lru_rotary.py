# expect: lru_cache_bypassed compile_only
import functools

import torch

BUILT = []


@functools.lru_cache(maxsize=None)
def rotary_table(seq_len, dim):
    BUILT.append(seq_len)
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
    ang = torch.outer(torch.arange(seq_len).float(), inv)
    return ang.cos(), ang.sin()


@torch.compile(backend="eager")
def rotate(q):
    cos, sin = rotary_table(q.shape[-2], q.shape[-1])
    q1, q2 = q[..., ::2], q[..., 1::2]
    return torch.cat([q1 * cos - q2 * sin, q1 * sin + q2 * cos], dim=-1)


for _ in range(3):
    rotate(torch.randn(2, 4, 16, 8))
assert BUILT == [16], f"rotary table built {len(BUILT)} times for one length"
