"""Piecewise-linear feature calibration (lattice-style), CPU kernel in numpy.

Registered as a torch.library custom op so torch.compile treats it as one opaque
node instead of graph-breaking on the numpy code.
"""
import numpy as np
import torch
import torch.nn as nn


def _segments(x, kx):
    # x: [B], kx: [K] sorted -> left keypoint index and fractional position
    idx = np.clip(np.searchsorted(kx, x, side="right") - 1, 0, len(kx) - 2)
    width = kx[idx + 1] - kx[idx]
    t = (x - kx[idx]) / width
    inside = (x >= kx[0]) & (x <= kx[-1])
    return idx, np.clip(t, 0.0, 1.0), width, inside


def _pwl_forward_np(x, kx, ky):
    out = np.empty_like(x)
    for f in range(x.shape[1]):
        out[:, f] = np.interp(x[:, f], kx[f], ky[f])
    return out


def _pwl_backward_np(grad, x, kx, ky):
    grad_x = np.zeros_like(x)
    grad_ky = np.zeros_like(ky)
    for f in range(x.shape[1]):
        idx, t, width, inside = _segments(x[:, f], kx[f])
        slope = (ky[f, idx + 1] - ky[f, idx]) / width
        grad_x[:, f] = grad[:, f] * slope * inside
        np.add.at(grad_ky[f], idx, grad[:, f] * (1.0 - t))
        np.add.at(grad_ky[f], idx + 1, grad[:, f] * t)
    return grad_x, grad_ky


@torch.library.custom_op("calib::pwl", mutates_args=())
def pwl(x: torch.Tensor, kx: torch.Tensor, ky: torch.Tensor) -> torch.Tensor:
    out = _pwl_forward_np(x.detach().cpu().numpy(), kx.detach().cpu().numpy(), ky.detach().cpu().numpy())
    return torch.from_numpy(out).to(x.device)


@pwl.register_fake
def _(x, kx, ky):
    torch._check(kx.shape == ky.shape)
    torch._check(x.shape[1] == kx.shape[0])
    return torch.empty_like(x)


def _setup_context(ctx, inputs, output):
    x, kx, ky = inputs
    ctx.save_for_backward(x, kx, ky)


def _backward(ctx, grad):
    x, kx, ky = ctx.saved_tensors
    gx, gky = _pwl_backward_np(
        grad.contiguous().numpy(), x.numpy(), kx.numpy(), ky.numpy()
    )
    return torch.from_numpy(gx), None, torch.from_numpy(gky)


pwl.register_autograd(_backward, setup_context=_setup_context)


class PWLCalibrator(nn.Module):
    """One monotone-initialised piecewise-linear calibrator per input feature."""

    def __init__(self, n_features, n_keypoints=16, lo=-3.0, hi=3.0):
        super().__init__()
        kx = torch.linspace(lo, hi, n_keypoints).repeat(n_features, 1)
        self.register_buffer("kx", kx)
        self.ky = nn.Parameter(torch.linspace(-1.0, 1.0, n_keypoints).repeat(n_features, 1))

    def forward(self, x):
        return pwl(x.contiguous(), self.kx, self.ky)
