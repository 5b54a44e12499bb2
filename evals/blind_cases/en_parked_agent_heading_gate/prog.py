"""Nightly parity gate for the agent motion forecaster.

Runs the forecaster on a synthetic scene batch in eager mode and with
torch.compile (the configuration we serve with) and fails if the predicted
world-frame trajectories disagree by more than POS_TOL metres.
"""
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HIST = 6          # 0.6 s of history at 10 Hz
FUT = 12          # 1.2 s of future at 10 Hz
DT = 0.1
N_AGENTS = 384
POS_TOL = 1e-3    # metres


# ----------------------------------------------------------------------------
# synthetic scenes
# ----------------------------------------------------------------------------
def make_scene(n_agents, seed):
    """Agent histories as logged by the tracker: position, speed, yaw per step."""
    g = torch.Generator().manual_seed(seed)
    yaw0 = (torch.rand(n_agents, generator=g) * 2 - 1) * math.pi
    speed0 = torch.rand(n_agents, generator=g) * 14.0
    accel = (torch.rand(n_agents, generator=g) - 0.5) * 2.0
    yaw_rate = (torch.rand(n_agents, generator=g) - 0.5) * 0.4

    # roughly a third of the agents are parked / waiting at a light;
    # the tracker reports exactly zero speed for them
    parked = torch.rand(n_agents, generator=g) < 0.3
    speed0 = torch.where(parked, torch.zeros_like(speed0), speed0)
    accel = torch.where(parked, torch.zeros_like(accel), accel)
    yaw_rate = torch.where(parked, torch.zeros_like(yaw_rate), yaw_rate)

    t = torch.arange(HIST, dtype=torch.float32) * DT
    speed = (speed0[:, None] + accel[:, None] * t).clamp(min=0.0)
    yaw = yaw0[:, None] + yaw_rate[:, None] * t
    yaw = torch.atan2(torch.sin(yaw), torch.cos(yaw))

    x = torch.cumsum(speed * torch.cos(yaw) * DT, dim=1)
    y = torch.cumsum(speed * torch.sin(yaw) * DT, dim=1)
    origin = torch.randn(n_agents, 2, generator=g) * 40.0
    pos = torch.stack([x, y], dim=-1) + origin[:, None, :]
    pos = pos + torch.randn(pos.shape, generator=g) * 0.01 * (~parked)[:, None, None]

    agent_type = torch.randint(0, 3, (n_agents,), generator=g)
    return {"pos": pos, "speed": speed, "yaw": yaw, "agent_type": agent_type}


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class AgentFeaturizer(nn.Module):
    """Kinematic features in the agent's own frame."""

    def forward(self, pos, speed, yaw):
        vx = speed * torch.cos(yaw)
        vy = speed * torch.sin(yaw)
        # displacement integrated over the history window
        disp_x = (vx * DT).sum(dim=-1)
        disp_y = (vy * DT).sum(dim=-1)
        heading = torch.atan2(disp_y, disp_x)

        c, s = torch.cos(heading), torch.sin(heading)
        rel = pos - pos[:, -1:, :]
        local_x = rel[..., 0] * c[:, None] + rel[..., 1] * s[:, None]
        local_y = -rel[..., 0] * s[:, None] + rel[..., 1] * c[:, None]

        yaw_err = torch.atan2(torch.sin(yaw - heading[:, None]), torch.cos(yaw - heading[:, None]))
        accel = (speed[:, -1] - speed[:, 0]) / ((HIST - 1) * DT)
        feats = torch.cat(
            [
                local_x, local_y,
                speed / 10.0,
                yaw_err,
                accel[:, None],
                torch.stack([c, s], dim=-1),
            ],
            dim=-1,
        )
        return feats, heading


class Forecaster(nn.Module):
    def __init__(self, d_model=128, n_types=3, n_modes=3):
        super().__init__()
        self.featurizer = AgentFeaturizer()
        in_dim = 4 * HIST + 3
        self.type_emb = nn.Embedding(n_types, d_model)
        self.encoder = nn.Sequential(
            nn.Linear(in_dim, d_model), nn.GELU(),
            nn.Linear(d_model, d_model), nn.GELU(),
        )
        self.norm = nn.LayerNorm(d_model)
        self.n_modes = n_modes
        self.traj_head = nn.Linear(d_model, n_modes * FUT * 2)
        self.mode_head = nn.Linear(d_model, n_modes)

    def forward(self, pos, speed, yaw, agent_type):
        feats, heading = self.featurizer(pos, speed, yaw)
        h = self.norm(self.encoder(feats) + self.type_emb(agent_type))
        n = pos.shape[0]
        local = self.traj_head(h).view(n, self.n_modes, FUT, 2)
        # constant-velocity prior along the heading, plus learned residual
        steps = torch.arange(1, FUT + 1, dtype=pos.dtype, device=pos.device) * DT
        prior_x = speed[:, -1:, None] * steps[None, None, :]
        local = local + torch.stack([prior_x.expand(-1, self.n_modes, -1),
                                     torch.zeros_like(prior_x).expand(-1, self.n_modes, -1)], dim=-1)
        c = torch.cos(heading)[:, None, None]
        s = torch.sin(heading)[:, None, None]
        wx = local[..., 0] * c - local[..., 1] * s
        wy = local[..., 0] * s + local[..., 1] * c
        world = torch.stack([wx, wy], dim=-1) + pos[:, -1, None, None, :]
        mode_logp = F.log_softmax(self.mode_head(h), dim=-1)
        return world, mode_logp


# ----------------------------------------------------------------------------
# gate
# ----------------------------------------------------------------------------
def best_mode(world, mode_logp):
    idx = mode_logp.argmax(dim=-1)
    return world[torch.arange(world.shape[0]), idx]


def main():
    torch.manual_seed(0)
    model = Forecaster().eval()
    compiled = torch.compile(model)

    failures = 0
    t0 = time.time()
    for seed in (11, 12, 13):
        scene = make_scene(N_AGENTS, seed)
        args = (scene["pos"], scene["speed"], scene["yaw"], scene["agent_type"])
        with torch.no_grad():
            ref_world, ref_logp = model(*args)
            out_world, out_logp = compiled(*args)
        ref = best_mode(ref_world, ref_logp)
        out = best_mode(out_world, out_logp)
        err = (ref - out).norm(dim=-1).max(dim=-1).values     # per-agent max displacement error
        logp_err = (ref_logp - out_logp).abs().max().item()
        bad = (err > POS_TOL).nonzero().flatten()
        print(f"scene {seed}: agents={N_AGENTS} max_pos_err={err.max().item():.4f} m "
              f"mean_pos_err={err.mean().item():.4f} m logp_err={logp_err:.2e} "
              f"agents_over_tol={bad.numel()}")
        if bad.numel():
            failures += 1
            print(f"   first offending agents: {bad[:8].tolist()}")
    print(f"gate wall time {time.time() - t0:.1f}s")
    if failures:
        print(f"PARITY GATE FAILED: {failures}/3 scenes exceed {POS_TOL} m")
        sys.exit(1)
    print("PARITY GATE PASSED")


if __name__ == "__main__":
    main()
