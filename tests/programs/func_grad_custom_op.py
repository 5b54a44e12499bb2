"""Per-row sensitivities with torch.compile(torch.func.grad(...)) of a model that calls a custom op whose gradient
comes from register_autograd: torch.func rejects the autograd.Function torch generates for it ("must override the
setup_context staticmethod"), with or without torch.compile. FIXED=1 takes the gradient with torch.autograd.grad.
(Blind A/B batch 65: Next listed the same error's graph break, the fullgraph error and a failed recompile.)"""
import os

import numpy as np
import torch
import torch.nn as nn

FIXED = os.environ.get("FIXED") == "1"


@torch.library.custom_op("demo::soft_clip", mutates_args=())
def soft_clip(x: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(np.tanh(x.detach().numpy()))


@soft_clip.register_fake
def _(x):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return grad * (1 - y * y)


soft_clip.register_autograd(_backward, setup_context=_setup)


class Pricer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, spot, vol):
        feats = torch.stack([spot, vol, spot * vol, soft_clip(spot - 1.0)], -1)
        return self.lin(feats).squeeze(-1)


torch.manual_seed(0)
model = Pricer()
spot, vol = torch.rand(64) + 0.5, torch.rand(64) * 0.3


def book(spot, vol):
    return model(spot, vol).sum()


if FIXED:
    s, v = spot.clone().requires_grad_(), vol.clone().requires_grad_()
    delta, vega = torch.autograd.grad(torch.compile(model)(s, v).sum(), (s, v))
else:
    delta, vega = torch.compile(torch.func.grad(book, argnums=(0, 1)))(spot, vol)
print(f"book delta {delta.sum().item():.4f}, vega {vega.sum().item():.4f}")
