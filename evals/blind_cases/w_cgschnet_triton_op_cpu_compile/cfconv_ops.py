"""Fused continuous-filter convolution (cosine cutoff + gather + multiply + scatter).

The Triton kernel is what we run on the cluster GPUs; on laptops / CPU CI the op
dispatches to the plain PyTorch reference registered for the "cpu" device.
"""
import math

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _cfconv_edge_kernel(
    x_ptr, filt_ptr, dist_ptr, src_ptr, dst_ptr, out_ptr,
    num_edges, feat_dim, cutoff,
    BLOCK_F: tl.constexpr,
):
    e = tl.program_id(0)
    if e >= num_edges:
        return
    src = tl.load(src_ptr + e)
    dst = tl.load(dst_ptr + e)
    d = tl.load(dist_ptr + e)
    c = 0.5 * (tl.cos(d * 3.141592653589793 / cutoff) + 1.0)
    c = tl.where(d < cutoff, c, 0.0)
    for f0 in range(0, feat_dim, BLOCK_F):
        offs = f0 + tl.arange(0, BLOCK_F)
        m = offs < feat_dim
        w = tl.load(filt_ptr + e * feat_dim + offs, mask=m, other=0.0) * c
        xj = tl.load(x_ptr + src * feat_dim + offs, mask=m, other=0.0)
        tl.atomic_add(out_ptr + dst * feat_dim + offs, xj * w, mask=m)


@triton_op("cgkern::fused_cfconv", mutates_args={})
def fused_cfconv(
    x: torch.Tensor,
    filt: torch.Tensor,
    dist: torch.Tensor,
    edge_src: torch.Tensor,
    edge_dst: torch.Tensor,
    cutoff: float,
) -> torch.Tensor:
    x = x.contiguous()
    filt = filt.contiguous()
    out = torch.zeros_like(x)
    num_edges = edge_src.shape[0]
    feat_dim = x.shape[1]
    block_f = min(128, triton.next_power_of_2(feat_dim))
    wrap_triton(_cfconv_edge_kernel)[(num_edges,)](
        x, filt, dist, edge_src, edge_dst, out,
        num_edges, feat_dim, cutoff,
        BLOCK_F=block_f,
    )
    return out


@fused_cfconv.register_kernel("cpu")
def _fused_cfconv_cpu(x, filt, dist, edge_src, edge_dst, cutoff):
    c = 0.5 * (torch.cos(dist * math.pi / cutoff) + 1.0)
    c = c * (dist < cutoff).to(x.dtype)
    msg = x[edge_src] * filt * c.unsqueeze(-1)
    out = torch.zeros_like(x)
    out.index_add_(0, edge_dst, msg)
    return out
