"""CPU fallback for the fused scale+mask+softmax kernel (Megatron-style).

The CUDA build ships a fused kernel; on CPU boxes we use this autograd.Function,
which keeps the same memory footprint as the fused kernel.
"""
import torch


class ScaledMaskedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, pad_mask, scale):
        # scores: [B, H, Tq, Tk]; pad_mask: [B, 1, 1, Tk] bool, True = padding
        scaled = scores * scale
        scaled = scaled.masked_fill(pad_mask, -10000.0)
        probs = torch.softmax(scaled, dim=-1)
        ctx.scale = scale
        ctx.save_for_backward(probs)
        return probs

    @staticmethod
    def backward(ctx, grad_probs):
        (probs,) = ctx.saved_tensors
        grad_scaled = probs * (grad_probs - (grad_probs * probs).sum(dim=-1, keepdim=True))
        return grad_scaled * ctx.scale, None, None


def scaled_masked_softmax(scores, pad_mask, scale):
    return ScaledMaskedSoftmax.apply(scores, pad_mask, scale)
