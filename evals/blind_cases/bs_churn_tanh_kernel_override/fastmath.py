"""CPU fast-math kernels shared by our tabular models.

tanh is the hot activation in the churn MLP; numpy's vectorised tanh is a bit
faster than ATen's on our old build boxes, so we route aten::tanh on CPU
through it and give it the analytic backward.
"""
import numpy as np
import torch

_lib = None


class _NumpyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        xc = x.detach().contiguous()
        out = torch.from_numpy(np.tanh(xc.numpy())).to(x.dtype)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (1.0 - y * y)


def _tanh_cpu(x):
    return _NumpyTanh.apply(x)


def install():
    global _lib
    if _lib is not None:
        return
    _lib = torch.library.Library("aten", "IMPL")
    _lib.impl("tanh", _tanh_cpu, "AutogradCPU")
