"""Fused projection for the two task heads of the multi-task model.

Both heads read the same trunk features, so we do the two GEMMs in one
autograd node and skip the weight-gradient GEMM of a head whose output did not
take part in the loss (task-sampled batches only carry one label set).
"""
import math

import torch
import torch.nn as nn


class _TwoHeadProjection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, w_cls, b_cls, w_reg, b_reg):
        ctx.save_for_backward(h, w_cls, w_reg)
        ctx.set_materialize_grads(False)
        logits = torch.addmm(b_cls, h, w_cls.t())
        reg = torch.addmm(b_reg, h, w_reg.t())
        return logits, reg

    @staticmethod
    def backward(ctx, g_cls, g_reg):
        h, w_cls, w_reg = ctx.saved_tensors
        grad_h = None
        gw_cls = gb_cls = gw_reg = gb_reg = None
        active = 0
        if g_cls is not None:
            active += 1
            grad_h = g_cls @ w_cls
            gw_cls = g_cls.t() @ h
            gb_cls = g_cls.sum(0)
        if g_reg is not None:
            active += 1
            gh = g_reg @ w_reg
            grad_h = gh if grad_h is None else grad_h + gh
            gw_reg = g_reg.t() @ h
            gb_reg = g_reg.sum(0)
        if grad_h is not None and active > 1:
            # balance the shared-trunk gradient between the tasks present in the batch
            grad_h = grad_h / active
        return grad_h, gw_cls, gb_cls, gw_reg, gb_reg


class TwoHeadProjection(nn.Module):
    def __init__(self, d_in, n_classes, n_targets):
        super().__init__()
        self.w_cls = nn.Parameter(torch.empty(n_classes, d_in))
        self.b_cls = nn.Parameter(torch.zeros(n_classes))
        self.w_reg = nn.Parameter(torch.empty(n_targets, d_in))
        self.b_reg = nn.Parameter(torch.zeros(n_targets))
        nn.init.kaiming_uniform_(self.w_cls, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.w_reg, a=math.sqrt(5))

    def forward(self, h):
        return _TwoHeadProjection.apply(h, self.w_cls, self.b_cls, self.w_reg, self.b_reg)
