"""PPO actor-critic for a continuous-control task (obs_dim=17, act_dim=6)."""
import torch
import torch.nn as nn


class RunningObsNorm(nn.Module):
    """Exponential running mean/var of observations; updated on every training-mode forward."""

    def __init__(self, dim, momentum=0.05, clip=10.0, eps=1e-8):
        super().__init__()
        self.momentum, self.clip, self.eps = momentum, clip, eps
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))

    @torch.no_grad()
    def update(self, x):
        self.mean.lerp_(x.mean(0), self.momentum)
        self.var.lerp_(x.var(0, unbiased=False), self.momentum)

    def forward(self, x):
        if self.training:
            self.update(x)
        return ((x - self.mean) / torch.sqrt(self.var + self.eps)).clamp(-self.clip, self.clip)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=17, act_dim=6, hidden=256):
        super().__init__()
        self.obs_norm = RunningObsNorm(obs_dim)
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                nn.Linear(hidden, act_dim))
        self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                               nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.full((act_dim,), -0.5))

    def forward(self, obs):
        z = self.obs_norm(obs)
        return self.pi(z), self.log_std.expand(obs.shape[0], -1), self.v(z).squeeze(-1)
