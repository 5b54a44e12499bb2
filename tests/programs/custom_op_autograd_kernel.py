"""A custom op whose kernels use autograd (blind A/B batch 40: a learned pair potential's energy and forces as
one torch.library op, the forces from torch.func.vjp of the energy). Eager runs it. Compiled:
- as written, the fake kernel runs the same autograd code on fake tensors and Dynamo's fake-tensor call
  raises ("Please convert all Tensors to FakeTensors first ... GradTrackingTensor");
- --shape-fake (the fake kernel returns empty outputs of the right shapes): on torch versions that check
  custom ops for aliasing on the first compiled call (torch._functorch.config.check_custom_op_aliasing),
  the real kernel runs under that check's dispatch mode, where torch.func cannot work ("Cannot access
  storage of TensorWrapper");
- --fixed: that fake kernel, and the forces written out without autograd: runs compiled.
"""
import sys

import torch


def energy(pos, w):
    d = pos.unsqueeze(2) - pos.unsqueeze(1)
    r2 = d.square().sum(-1) + 1.0
    return (torch.tanh(r2 @ w) / r2).sum(dim=(1, 2))


def autograd_energy_forces(pos, w):
    e, vjp_fn = torch.func.vjp(lambda p: energy(p, w), pos)
    (g,) = vjp_fn(torch.ones_like(e))
    return e, -g


def analytic_energy_forces(pos, w):
    d = pos.unsqueeze(2) - pos.unsqueeze(1)
    r2 = d.square().sum(-1) + 1.0
    t = torch.tanh(r2 @ w)
    # dE/dr2[b,i,k] = sum_j (1 - t[b,i,j]^2) w[k,j] / r2[b,i,j] - t[b,i,k] / r2[b,i,k]^2
    g = ((1 - t.square()) / r2) @ w.T - t / r2.square()
    gs = g + g.transpose(1, 2)                       # r2 is symmetric in (i, k)
    return (t / r2).sum(dim=(1, 2)), -2 * (gs.unsqueeze(-1) * d).sum(2)


@torch.library.custom_op("potential::energy_forces", mutates_args=())
def energy_forces(pos: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    e, f = (analytic_energy_forces if "--fixed" in sys.argv else autograd_energy_forces)(pos, w)
    return e.clone(), f.clone()


@energy_forces.register_fake
def _(pos, w):
    if "--fixed" in sys.argv or "--shape-fake" in sys.argv:
        return pos.new_empty(pos.shape[:-2]), pos.new_empty(pos.shape)
    return autograd_energy_forces(pos, w)


def step(pos, vel, w, dt=1e-3):
    e, f = energy_forces(pos, w)
    vel = vel + dt * f
    return pos + dt * vel, vel, e


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 6
    pos, vel, w = torch.randn(2, n, 3), torch.zeros(2, n, 3), 0.1 * torch.randn(n, n)
    e_ref, f_ref = autograd_energy_forces(pos, w)
    e_an, f_an = analytic_energy_forces(pos, w)
    assert torch.allclose(e_ref, e_an, atol=1e-5) and torch.allclose(f_ref, f_an, atol=1e-4), (f_ref - f_an).abs().max()
    compiled = torch.compile(step, backend="aot_eager")
    for i in range(3):
        pos, vel, e = compiled(pos, vel, w)
    print(f"E after 3 steps: {e.sum().item():.5f}")
