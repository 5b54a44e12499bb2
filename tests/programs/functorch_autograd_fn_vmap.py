"""Per-example gradients (DP-SGD style) with torch.func vmap(grad(...)) through a custom autograd.Function
(setup_context + generate_vmap_rule), compiled whole: Dynamo crashes ("You tried to vmap over ApplyTemplate",
an InternalTorchDynamoError; blind A/B batch 51, pytorch#129845). The same code runs without torch.compile.
COMPILE=0: eager. FIX=formula: the activation's formula in plain ops while compiling (the workaround)."""
import os

import torch
from torch.func import functional_call, grad, vmap

FIX = os.environ.get("FIX", "")


class SwishFn(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * (s + x * s * (1 - s))


class Swish(torch.nn.Module):
    def forward(self, x):
        if FIX == "formula" and torch.compiler.is_compiling():
            return x * torch.sigmoid(x)
        return SwishFn.apply(x)


model = torch.nn.Sequential(torch.nn.Linear(8, 16), Swish(), torch.nn.Linear(16, 1))
params = {k: v.detach() for k, v in model.named_parameters()}


def sample_loss(p, x, y):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return torch.nn.functional.mse_loss(out.squeeze(0), y)


def per_example_grads(p, xs, ys):
    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(p, xs, ys)


torch.manual_seed(0)
xs, ys = torch.randn(6, 8), torch.randn(6, 1)
ref = per_example_grads(params, xs, ys)
fn = per_example_grads if os.environ.get("COMPILE") == "0" else torch.compile(per_example_grads, backend="eager")
got = fn(params, xs, ys)
diff = max((got[k] - ref[k]).abs().max().item() for k in ref)
print(f"per-example grads {tuple(got['0.weight'].shape)} max diff {diff:.1e}")
