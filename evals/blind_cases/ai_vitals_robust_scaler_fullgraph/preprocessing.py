"""Per-stay robust scaling for irregularly sampled vital-sign windows.

Missing measurements are stored as NaN. Each window is centred on its own median and
scaled by its inter-quartile range, per channel, so that patients with very different
baselines end up on a comparable scale. Missing values become 0 after scaling.
"""
import numpy as np
import torch


def robust_scale(x, eps=1e-3, clip=5.0):
    """x: (B, T, C) float tensor with NaNs for missing values -> (scaled, observed_mask)."""
    a = x.detach().cpu().numpy()
    med = np.nanmedian(a, axis=1, keepdims=True)
    q25, q75 = np.nanpercentile(a, [25.0, 75.0], axis=1, keepdims=True)
    z = (a - med) / (q75 - q25 + eps)
    z = np.clip(np.nan_to_num(z, nan=0.0), -clip, clip)
    mask = ~np.isnan(a)
    return torch.from_numpy(z).to(x.dtype), torch.from_numpy(mask).to(x.dtype)
