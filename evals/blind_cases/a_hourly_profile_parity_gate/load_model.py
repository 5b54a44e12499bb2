"""Hourly load forecaster used by the grid-ops dashboard.

The model keeps a per-hour-of-day residual profile that is refreshed online from
each context window it sees, and a small MLP that maps the de-seasonalised
context to the next-day forecast.
"""
import torch
import torch.nn as nn

HOURS_PER_DAY = 24


class HourlyProfile(nn.Module):
    """Running per-hour-of-day mean of the input, updated from every window.

    Windows handed to the forecaster are always aligned to local midnight, so
    position t of a window belongs to hour t % 24.
    """

    def __init__(self, momentum: float = 0.05):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("profile", torch.zeros(HOURS_PER_DAY))
        # number of context windows that have covered each hour
        self.register_buffer("windows_seen", torch.zeros(HOURS_PER_DAY))

    @torch.no_grad()
    def update(self, context: torch.Tensor) -> None:
        ctx_len = context.shape[-1]
        hours = torch.arange(ctx_len, device=context.device) % HOURS_PER_DAY
        days = ctx_len // HOURS_PER_DAY
        hourly_mean = context.reshape(-1, days, HOURS_PER_DAY).mean(dim=(0, 1))
        self.windows_seen[hours] = self.windows_seen[hours] + 1.0
        # warm start: plain average for the first windows, EMA afterwards
        rate = torch.clamp(1.0 / self.windows_seen, min=self.momentum)
        self.profile.mul_(1.0 - rate).add_(rate * hourly_mean)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        ctx_len = context.shape[-1]
        hours = torch.arange(ctx_len, device=context.device) % HOURS_PER_DAY
        return self.profile[hours]


class LoadForecaster(nn.Module):
    def __init__(self, context_days: int = 7, horizon: int = 24, hidden: int = 128):
        super().__init__()
        self.context_len = context_days * HOURS_PER_DAY
        self.horizon = horizon
        self.season = HourlyProfile()
        self.net = nn.Sequential(
            nn.Linear(self.context_len, hidden),
            nn.GELU(),
            nn.Linear(hidden, hidden),
            nn.GELU(),
            nn.Linear(hidden, horizon),
        )

    def forward(self, context: torch.Tensor, update_profile: bool = True) -> torch.Tensor:
        if update_profile:
            self.season.update(context)
        seasonal = self.season(context)
        resid = context - seasonal
        # next day starts at midnight again -> same profile for the horizon
        return self.net(resid) + self.season.profile[: self.horizon]
