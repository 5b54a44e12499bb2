"""An ONNX-converted Reshape: the target shape is an int64 buffer turned into torch.Size, after a
data-dependent check for ONNX's 0 (copy this dim). Eager accepts torch.Size of 0-d int tensors; Dynamo
crashes building it from FakeTensors (InternalTorchDynamoError). FIX=ints passes Python ints."""
import os

import torch

FIX = os.environ.get("FIX", "")


class OnnxReshape(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.register_buffer("shape", torch.tensor(shape, dtype=torch.int64))

    def forward(self, x):
        shape = self.shape
        if torch.any(shape == 0):
            shape = torch.where(shape == 0, torch.tensor(x.shape[: len(shape)]), shape)
        if FIX == "ints":
            return torch.reshape(x, [int(d) for d in shape.tolist()])
        return torch.reshape(x, torch.Size(shape))


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16)
        self.flat = OnnxReshape([2, -1])

    def forward(self, x):
        return self.flat(torch.relu(self.proj(x)))


model = Head().eval()
compiled = torch.compile(model, backend="eager")
x = torch.randn(2, 4, 16)
with torch.no_grad():
    print("shape", tuple(compiled(x).shape), "max diff", f"{(compiled(x) - model(x)).abs().max().item():.1e}")
