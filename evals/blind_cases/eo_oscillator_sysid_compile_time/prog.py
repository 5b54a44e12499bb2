"""System identification for a bank of damped structural modes.

Each sensor channel is modelled as a damped oscillator (stiffness k, damping c).
We fit k and c from recorded displacement/velocity snapshots using multiple
shooting: from every observed state we integrate SUBSTEPS symplectic-Euler steps
and compare with the next observed state.
"""
import math
import time

import torch
import torch.nn as nn

torch.manual_seed(0)

N_MODES = 24          # sensor channels / modes
N_WINDOWS = 128       # observation windows per recording
OBS_DT = 0.02         # seconds between two observations
SUBSTEPS = 8          # integration steps per observation window
TRAIN_STEPS = 40
LR = 0.05


# --------------------------------------------------------------------------
# synthetic "recording"
# --------------------------------------------------------------------------
def make_recording(true_k, true_c, n_windows, obs_dt, fine=64):
    dt = obs_dt / fine
    q = torch.randn(true_k.shape[0], dtype=torch.float64)
    p = torch.zeros_like(q)
    qs, ps = [q.clone()], [p.clone()]
    for _ in range(n_windows):
        for _ in range(fine):
            p = p - dt * (true_k * q + true_c * p)
            q = q + dt * p
        qs.append(q.clone())
        ps.append(p.clone())
    q_obs = torch.stack(qs).float()
    p_obs = torch.stack(ps).float()
    q_obs = q_obs + 0.002 * torch.randn_like(q_obs)
    return q_obs, p_obs


class ModalModel(nn.Module):
    def __init__(self, n_modes):
        super().__init__()
        # log-parametrisation keeps k and c positive
        self.log_k = nn.Parameter(torch.full((n_modes,), math.log(200.0)))
        self.log_c = nn.Parameter(torch.full((n_modes,), math.log(1.0)))

    def coeffs(self):
        return self.log_k.exp(), self.log_c.exp()


def integrate_window(q, p, k, c, dt, substeps: int):
    # symplectic Euler, only the state at the end of the window is needed
    for _ in range(substeps):
        p = p - dt * (k * q + c * p)
        q = q + dt * p
    return q, p


def shooting_loss(model, q_obs, p_obs, step_fn):
    k, c = model.coeffs()
    dt = OBS_DT / SUBSTEPS
    q_pred, p_pred = step_fn(q_obs[:-1], p_obs[:-1], k, c, dt, SUBSTEPS)
    q_err = (q_pred - q_obs[1:]).square().mean()
    p_err = (p_pred - p_obs[1:]).square().mean()
    return q_err + 0.01 * p_err


def fit(q_obs, p_obs, step_fn, label):
    model = ModalModel(N_MODES)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    t0 = time.perf_counter()
    first = None
    for it in range(TRAIN_STEPS):
        opt.zero_grad(set_to_none=True)
        loss = shooting_loss(model, q_obs, p_obs, step_fn)
        loss.backward()
        opt.step()
        if it == 0:
            first = time.perf_counter() - t0
        if it % 10 == 0 or it == TRAIN_STEPS - 1:
            print(f"[{label}] step {it:3d} loss {loss.item():.6f}")
    total = time.perf_counter() - t0
    k, c = model.coeffs()
    return k.detach(), c.detach(), first, total


def main():
    print(f"torch {torch.__version__}, substeps={SUBSTEPS}")
    true_k = torch.linspace(120.0, 900.0, N_MODES, dtype=torch.float64)
    true_c = torch.linspace(0.5, 4.0, N_MODES, dtype=torch.float64)
    q_obs, p_obs = make_recording(true_k, true_c, N_WINDOWS, OBS_DT)

    k_e, c_e, first_e, total_e = fit(q_obs, p_obs, integrate_window, "eager")

    compiled_step = torch.compile(integrate_window)
    k_c, c_c, first_c, total_c = fit(q_obs, p_obs, compiled_step, "compiled")

    def rel(a, b):
        return ((a - b.float()).abs() / b.float()).mean().item()

    print(f"eager    : first step {first_e:7.2f}s  total {total_e:7.2f}s  "
          f"k err {rel(k_e, true_k):.3f}  c err {rel(c_e, true_c):.3f}")
    print(f"compiled : first step {first_c:7.2f}s  total {total_c:7.2f}s  "
          f"k err {rel(k_c, true_k):.3f}  c err {rel(c_c, true_c):.3f}")
    print(f"max |k_eager - k_compiled| = {(k_e - k_c).abs().max().item():.3e}")


if __name__ == "__main__":
    main()
