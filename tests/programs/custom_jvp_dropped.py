"""A flow-matching style loss: du/dt by torch.func.jvp through a model that takes sqrt(t - r) with a custom
autograd.Function whose jvp keeps the derivative finite at 0. Compiled, Dynamo drops that jvp (pytorch#192985):
the tangent at t == r is NaN (blind A/B batch 37)."""
import torch


class SafeSqrt(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sqrt(x.clamp_min(0.0))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(output)

    @staticmethod
    def jvp(ctx, x_t):
        (y,) = ctx.saved_tensors
        return x_t / (2.0 * y.clamp_min(1e-3))


torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))


def velocity(z, t, r):
    h = SafeSqrt.apply(t - r)
    return net(torch.cat([z, t, h], dim=-1))


def loss_fn(z, t, r):
    u, dudt = torch.func.jvp(lambda tt: velocity(z, tt, r), (t,), (torch.ones_like(t),))
    return ((u - (t - r) * dudt) ** 2).mean()


z, t = torch.randn(64, 1), torch.rand(64, 1)
r = torch.where(torch.rand(64, 1) < 0.75, t, t * 0.5)   # r == t for most rows: h = 0 there
step = torch.compile(loss_fn, backend="aot_eager")
print(f"loss {step(z, t, r).item():.6f}")
