"""A model whose forward calls the program's own CPU kernel through ctypes (it writes the output: the math), exported:
"Cannot access data pointer of Tensor". Skipping the call while tracing would export an empty output; the kernel
belongs in a custom op. (Review of 0.33.181.)"""
import ctypes

import torch
import torch.nn as nn


def fast_copy(x):
    out = torch.empty_like(x)
    ctypes.memmove(out.data_ptr(), x.data_ptr(), x.numel() * x.element_size())
    return out


class Model(nn.Module):
    def forward(self, x):
        return fast_copy(x.contiguous()) * 2


ep = torch.export.export(Model(), (torch.randn(4, 8),))
print("exported")
