"""Small time-series kernels used by the forecasting pipeline.

These are registered as torch.library custom ops so that torch.compile treats
them as opaque calls (the production build swaps the Python bodies for the C++
versions from our sensor-kernels package; the Python versions are the reference
implementations used on dev boxes and in CI).
"""
import torch


@torch.library.custom_op("tsops::seasonal_difference_", mutates_args=("dst",))
def seasonal_difference_(src: torch.Tensor, dst: torch.Tensor, lag: int, coef: float) -> None:
    """Write the (fractionally) differenced series of ``src`` into ``dst``.

    dst[..., t] = src[..., t] - coef * src[..., t - lag]   for t >= lag
    dst[..., t] = src[..., t]                              for t <  lag

    The kernel walks the time axis front to back and writes ``dst`` as it goes,
    so ``src`` and ``dst`` must be different buffers.
    """
    T = src.shape[-1]
    for t in range(T):
        if t < lag:
            dst[..., t] = src[..., t]
        else:
            dst[..., t] = src[..., t] - coef * src[..., t - lag]


@seasonal_difference_.register_fake
def _seasonal_difference_fake(src, dst, lag, coef):
    return None


@torch.library.custom_op("tsops::robust_scale", mutates_args=())
def robust_scale(x: torch.Tensor, eps: float) -> torch.Tensor:
    """Per-row scaling by the median absolute deviation."""
    med = x.median(dim=-1, keepdim=True).values
    mad = (x - med).abs().median(dim=-1, keepdim=True).values
    return (x - med) / (mad + eps)


@robust_scale.register_fake
def _robust_scale_fake(x, eps):
    return torch.empty_like(x)
