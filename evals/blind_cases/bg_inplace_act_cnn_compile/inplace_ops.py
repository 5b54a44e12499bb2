"""Memory-saving activations for the tile classifier.

The activation overwrites its input buffer (the pre-activation is never kept),
and the backward pass is computed from the output only, in the style of
in-place activated BatchNorm.
"""
import torch


class InplaceLeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(x, slope):
        scale = torch.where(x > 0, 1.0, slope)
        return x.mul_(scale)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, slope = inputs
        ctx.mark_dirty(x)
        ctx.slope = slope
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * torch.where(y > 0, 1.0, ctx.slope), None


def inplace_leaky_relu(x, slope=0.01):
    return InplaceLeakyReLU.apply(x, slope)
