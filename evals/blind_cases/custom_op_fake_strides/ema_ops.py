"""CPU causal EMA smoothing op (numpy kernel) registered as a torch custom op.

y[..., t] = alpha * x[..., t] + (1 - alpha) * y[..., t-1]   along the last dim
"""
import numpy as np
import torch


@torch.library.custom_op("sensorlib::causal_ema", mutates_args=())
def causal_ema(x: torch.Tensor, alpha: float) -> torch.Tensor:
    a = np.ascontiguousarray(x.detach().cpu().numpy())
    out = np.empty_like(a)
    out[..., 0] = a[..., 0]
    for t in range(1, a.shape[-1]):
        out[..., t] = alpha * a[..., t] + (1.0 - alpha) * out[..., t - 1]
    return torch.from_numpy(out).to(x.device)


@causal_ema.register_fake
def _(x, alpha):
    return torch.empty_like(x)


def _setup_context(ctx, inputs, output):
    ctx.alpha = inputs[1]


def _backward(ctx, grad):
    # adjoint of a first-order IIR filter = the same filter run backwards in time
    g = causal_ema(grad.flip(-1), ctx.alpha).flip(-1)
    return g, None


causal_ema.register_autograd(_backward, setup_context=_setup_context)


if __name__ == "__main__":
    # our unit test for the op
    x = torch.randn(4, 8, 50, requires_grad=True)
    torch.library.opcheck(causal_ema, (x, 0.2))
    y = causal_ema(x, 0.2)
    ref = torch.zeros_like(x[..., 0])
    for t in range(x.shape[-1]):
        ref = 0.2 * x[..., t] + 0.8 * ref if t else x[..., 0]
        assert torch.allclose(y[..., t], ref, atol=1e-5)
    print("opcheck + reference check passed")
