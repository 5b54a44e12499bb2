"""Runtime modules for graphs converted from ONNX (adapted from the onnx2torch
node converters we vendored when we moved off onnxruntime).

Shape-like ONNX inputs (Reshape's `shape`, Expand's `shape`, ...) arrive as int64
tensors, exactly as they are stored in the ONNX initializers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class OnnxReshape(nn.Module):
    def forward(self, input_tensor: torch.Tensor, shape: torch.Tensor) -> torch.Tensor:
        # ONNX: a 0 in `shape` means "copy this dim from the input" (allowzero=0)
        if torch.any(shape == 0):
            shape = [input_tensor.shape[i] if dim == 0 else dim for i, dim in enumerate(shape)]
        return torch.reshape(input_tensor, torch.Size(shape))


class OnnxConcat(nn.Module):
    def __init__(self, axis: int):
        super().__init__()
        self.axis = axis

    def forward(self, *inputs):
        return torch.cat(inputs, dim=self.axis)


class OnnxSoftmaxV13(nn.Module):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return torch.softmax(x, dim=self.axis)


class OnnxResizeBilinear(nn.Module):
    def forward(self, x, sizes: torch.Tensor):
        return F.interpolate(x, size=(int(sizes[2]), int(sizes[3])), mode="bilinear", align_corners=False)
